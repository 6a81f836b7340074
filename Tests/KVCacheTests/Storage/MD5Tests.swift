@testable import KVCache
import XCTest

final class MD5Tests: XCTestCase {
    /// RFC 1321 appendix A.5 test suite.
    func testRFC1321Vectors() {
        XCTAssertEqual(MD5.hex(""), "d41d8cd98f00b204e9800998ecf8427e")
        XCTAssertEqual(MD5.hex("a"), "0cc175b9c0f1b6a831c399e269772661")
        XCTAssertEqual(MD5.hex("abc"), "900150983cd24fb0d6963f7d28e17f72")
        XCTAssertEqual(MD5.hex("message digest"), "f96b697d7cb7938d525a2f31aaf161d0")
        XCTAssertEqual(MD5.hex("abcdefghijklmnopqrstuvwxyz"), "c3fcd3d76192e4007dfb496cca67e13b")
        XCTAssertEqual(MD5.hex(String(repeating: "1234567890", count: 8)), "57edf4a22be3c955ac49da2e2107b67a")
    }

    /// Lengths around the block and padding boundaries (one or two tail blocks, whole blocks read in place),
    /// non-ASCII UTF-8, and a collection without contiguous storage. Digests from Python's hashlib.
    func testBlockBoundariesAndNonContiguousInput() {
        let expected: [Int: String] = [
            55: "a423850901cc19bda820e14169e8a7ae", 56: "a6be95aef9ae896877681971e82c050d",
            57: "4bc56db75dbc8d7fc52ea3988090a6b7", 63: "6ab137c840ef42e0281dc86e4b9cbe3b",
            64: "ce6e22000dda0f845d5f3e3600099e15", 65: "4f837f253924afeef88aea12e1a8e537",
            119: "f7276e47af32f9d59574739bdc428eaf", 120: "3445203299c6a62212b8e4f4fe014ff2",
            127: "bf8891c0fca2824baf4a77e90df88bfd", 128: "59838495f47f1b53adcc1e23f3a43d0a",
            1000: "f508aa489132a4985042045dfee3cc2a",
        ]
        for (length, digest) in expected {
            let text = String((0..<length).map { Character(Unicode.Scalar(UInt8(0x61 + ($0 * 7) % 26))) })
            XCTAssertEqual(MD5.hex(text), digest, "length \(length)")
            let bytes = (0..<length).lazy.map { UInt8(0x61 + ($0 * 7) % 26) } // no contiguous storage
            XCTAssertEqual(MD5.digest(bytes).map { String(format: "%02x", $0) }.joined(), digest, "length \(length)")
        }
        XCTAssertEqual(MD5.hex("https://例え.jp/画像 ?q=1\n"), "3125ab12a6f122c8fbe17a025446c293")
    }
}
