import Foundation
import PipelineModel
import XCTest

/// The pipeline model's schedules under ThreadSanitizer (`make test` runs this target with TSan): a small budget
/// of the same seeded schedules as `WebImageTests.PipelineModelTests`, so a data race behind a model step shows.
/// `WEBIMAGE_MODEL_SEED` / `WEBIMAGE_MODEL_SCHEDULES` / `WEBIMAGE_MODEL_STEPS` apply here too.
final class PipelineModelStressTests: XCTestCase {
    func testModelSchedulesUnderThreadSanitizer() throws {
        let budget = PipelineModelBudget.fromEnvironment(seed: 0x5EED_0015, schedules: 8, steps: 160)
        if let failure = try PipelineModel.runSchedules(budget) { XCTFail("under ThreadSanitizer: " + failure) }
    }
}
