import Foundation

/// How many randomized schedules the pipeline model runs, and from which seed.
///
/// - `WEBIMAGE_MODEL_SEED`: the first schedule's seed (decimal or 0x-hex); schedule `i` uses `seed + i`. A
///   failure prints the seed of the failing schedule: `WEBIMAGE_MODEL_SEED=<it> WEBIMAGE_MODEL_SCHEDULES=1`
///   replays it.
/// - `WEBIMAGE_MODEL_SCHEDULES`: how many schedules (the test's fixed budget by default; `make soak` raises it).
/// - `WEBIMAGE_MODEL_STEPS`: steps per schedule.
public struct PipelineModelBudget: Sendable {
    public var seed: UInt64
    public var schedules: Int
    public var steps: Int

    /// The budget from the environment, with these defaults.
    public static func fromEnvironment(seed: UInt64, schedules: Int, steps: Int) -> Self {
        let environment = ProcessInfo.processInfo.environment
        return Self(seed: environment["WEBIMAGE_MODEL_SEED"].flatMap(Self.parse) ?? seed,
                    schedules: environment["WEBIMAGE_MODEL_SCHEDULES"].flatMap { Int($0) } ?? schedules,
                    steps: environment["WEBIMAGE_MODEL_STEPS"].flatMap { Int($0) } ?? steps)
    }

    private static func parse(_ text: String) -> UInt64? {
        text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
    }
}
