import Foundation
import PipelineModel
import TestSupport
import XCTest

/// The randomized pipeline model (see `PipelineModel`): a fixed budget of seeded schedules in `make test`;
/// `WEBIMAGE_MODEL_SCHEDULES` raises it (`make soak`), `WEBIMAGE_MODEL_SEED` replays a printed seed.
final class PipelineModelTests: XCTestCase {
    func testRandomSchedulesKeepThePipelinesPromises() throws {
        let budget = PipelineModelBudget.fromEnvironment(seed: 0x5EED_0015, schedules: 24, steps: 160)
        let server = try HTTPTestServer.start()
        defer { server.shutdown() }
        try PipelineModel.installRoutes(on: server)
        for schedule in 0..<budget.schedules {
            let seed = budget.seed &+ UInt64(schedule)
            let violations = PipelineModel.run(seed: seed, steps: budget.steps, server: server)
            if !violations.isEmpty {
                XCTFail("pipeline model: \(violations.count) violations with seed \(seed) "
                    + "(replay: WEBIMAGE_MODEL_SEED=\(seed) WEBIMAGE_MODEL_SCHEDULES=1 "
                    + "WEBIMAGE_MODEL_STEPS=\(budget.steps)):\n" + violations.prefix(20).joined(separator: "\n"))
                return
            }
        }
    }
}
