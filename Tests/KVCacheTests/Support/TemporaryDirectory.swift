import TestSupport
import Foundation

/// A fresh folder under the system temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init(_ label: String = "kvcache") throws {
        path = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(label)-\(getpid())-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() throws { try FileManager.default.removeItem(atPath: path) }

    func files(in folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path + "/" + folder).sorted()
    }
}

/// Deterministic test bytes: `count` bytes derived from `seed`.
func testBytes(_ count: Int, seed: Int) -> Data {
    var rng = SplitMix64(seed: UInt64(truncatingIfNeeded: seed) &+ 1)
    var bytes = [UInt8](repeating: 0, count: count)
    for i in 0..<count { bytes[i] = UInt8(truncatingIfNeeded: rng.next()) }
    return Data(bytes)
}
