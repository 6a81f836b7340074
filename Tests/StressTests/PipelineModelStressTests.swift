import Foundation
import PipelineModel
import TestSupport
import XCTest

/// The pipeline model's schedules under ThreadSanitizer (`make test` runs this target with TSan): a small budget
/// of the same seeded schedules as `WebImageTests.PipelineModelTests`, so a data race behind a model step shows.
/// `WEBIMAGE_MODEL_SEED` / `WEBIMAGE_MODEL_SCHEDULES` / `WEBIMAGE_MODEL_STEPS` apply here too.
final class PipelineModelStressTests: XCTestCase {
    func testModelSchedulesUnderThreadSanitizer() throws {
        let budget = PipelineModelBudget.fromEnvironment(seed: 0x5EED_0015, schedules: 4, steps: 120)
        let server = try HTTPTestServer.start()
        defer { server.shutdown() }
        try PipelineModel.installRoutes(on: server)
        for schedule in 0..<budget.schedules {
            let seed = budget.seed &+ UInt64(schedule)
            let violations = PipelineModel.run(seed: seed, steps: budget.steps, server: server)
            if !violations.isEmpty {
                XCTFail("pipeline model under TSan: violations with seed \(seed) (replay: WEBIMAGE_MODEL_SEED=\(seed) "
                    + "WEBIMAGE_MODEL_SCHEDULES=1 WEBIMAGE_MODEL_STEPS=\(budget.steps)):\n"
                    + violations.prefix(20).joined(separator: "\n"))
                return
            }
        }
    }
}
