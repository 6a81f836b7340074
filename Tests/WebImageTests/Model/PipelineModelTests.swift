import Foundation
import PipelineModel
import XCTest

/// The randomized pipeline model (see `PipelineModel`): a fixed budget of seeded schedules in `make test`;
/// `WEBIMAGE_MODEL_SCHEDULES` raises it (`make soak`), `WEBIMAGE_MODEL_SEED` replays a printed seed.
final class PipelineModelTests: XCTestCase {
    func testRandomSchedulesKeepThePipelinesPromises() throws {
        let budget = PipelineModelBudget.fromEnvironment(seed: 0x5EED_0015, schedules: 40, steps: 160)
        if let failure = try PipelineModel.runSchedules(budget) { XCTFail(failure) }
    }
}
