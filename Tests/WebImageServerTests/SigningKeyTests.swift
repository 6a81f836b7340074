import Foundation
import TestSupport
import WebImageServerCore
import XCTest

/// Signing keys are refused when they are made: under 16 bytes (a 2-byte key was recovered from one signed URL in
/// 0.22 s), or written with anything but hex digits (`+f+f` was read as `0f 0f` by `UInt8(_:radix:)`).
final class SigningKeyTests: XCTestCase {
    func testHexKeysAreDigitsOnlyAndAtLeastSixteenBytes() throws {
        let sixteen = String(repeating: "a5", count: 16)
        XCTAssertEqual(try URLSigner.keyBytes(hex: sixteen), [UInt8](repeating: 0xA5, count: 16), "exactly the minimum")
        XCTAssertEqual(try URLSigner.keyBytes(hex: sixteen.uppercased()).count, 16, "either case")
        let cases: [(hex: String, error: URLSignerError)] = [
            ("", .keyTooShort(bytes: 0, minimum: 16)),
            ("01", .keyTooShort(bytes: 1, minimum: 16)),
            ("0102", .keyTooShort(bytes: 2, minimum: 16)),
            (String(repeating: "ab", count: 15), .keyTooShort(bytes: 15, minimum: 16)),
            (String(repeating: "+f", count: 16), .notHex(offset: 0)),
            ("0f" + String(repeating: "+f", count: 15), .notHex(offset: 2)),
            ("-f" + String(repeating: "0f", count: 15), .notHex(offset: 0)),
            ("0x" + String(repeating: "0f", count: 16), .notHex(offset: 1)),
            (" " + sixteen, .notHex(offset: 0)),
            (sixteen + "\n", .notHex(offset: 32)),
            (sixteen + "g0", .notHex(offset: 32)),
            ("٣" + String(repeating: "0", count: 31), .notHex(offset: 0)),
            (sixteen + "a", .oddLength(digits: 33)),
        ]
        for (hex, expected) in cases {
            XCTAssertThrowsError(try URLSigner.keyBytes(hex: hex), hex.debugDescription) { error in
                XCTAssertEqual(error as? URLSignerError, expected, hex.debugDescription)
            }
            XCTAssertThrowsError(try URLSigner(hexKey: hex), hex.debugDescription)
        }
    }

    func testShortKeysAreRefusedBySignerAndService() throws {
        XCTAssertThrowsError(try URLSigner(key: [1])) { error in
            XCTAssertEqual(error as? URLSignerError, .keyTooShort(bytes: 1, minimum: 16))
        }
        XCTAssertThrowsError(try URLSigner(key: [UInt8](repeating: 7, count: 15)))
        XCTAssertNoThrow(try URLSigner(key: [UInt8](repeating: 7, count: 16)))

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-server-key-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var configuration = ImageServiceConfiguration(cacheDirectory: folder.path)
        configuration.signingKey = [0x0F, 0x0F]
        XCTAssertThrowsError(try ImageService(configuration: configuration)) { error in
            XCTAssertEqual(error as? ImageServiceError, .badSigningKey(.keyTooShort(bytes: 2, minimum: 16)))
        }
        configuration.signingKey = Array("sixteen bytes ok".utf8)
        XCTAssertNoThrow(try ImageService(configuration: configuration))
    }

    /// The executable refuses a weak `--key` at start, with a message that says why, and a non-zero status.
    func testTheExecutableRefusesWeakKeysAtStart() async throws {
        let binary = ImageServerShutdownTests.binary
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw XCTSkip("\(binary.path) not built; run `swift build` first")
        }
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-server-keyexe-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: cache) }
        for (key, message) in [("01", "at least 16"), ("0102", "at least 16"), (String(repeating: "+f", count: 16), "not hex"),
                               ("0x" + String(repeating: "ab", count: 16), "not hex"), (String(repeating: "a", count: 33), "even")] {
            let process = Process()
            process.executableURL = binary
            process.arguments = ["--port", "0", "--host", "127.0.0.1", "--cache", cache.path, "--key", key]
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            try process.run()
            let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            XCTAssertNotEqual(process.terminationStatus, 0, "--key \(key) was accepted: \(stdout)")
            XCTAssertFalse(stdout.contains("listening"), key)
            XCTAssertTrue(stderr.contains(message), "--key \(key): \(stderr)")
            XCTAssertFalse(stderr.contains(key) && key.count > 4, "the key is not echoed: \(stderr)")
        }
    }
}
