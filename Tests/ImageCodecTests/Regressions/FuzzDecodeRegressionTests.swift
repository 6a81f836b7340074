import Foundation
import ImageCodec
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Inputs found by the FuzzDecode fuzzer (Fuzz/), kept as regression tests.
final class FuzzDecodeRegressionTests: XCTestCase {
    /// Fuzzer input `slow-unit-af39c961…`: a 1×1 PNG whose `iTXt` chunk declares 0x3FFFFFFF bytes and has 8.
    /// libpng 1.6.39 allocated and zeroed the declared length (1 GB) before finding the input short; the PNG
    /// shim now skips the metadata chunks the decoder never uses.
    static let hugeTextChunkPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABAQMAAAAl21bKP////2lUWHQp1YOAAAAAAElFTkSuQmCC"

    func testHugeDeclaredTextChunkIsRejectedWithoutAllocatingIt() throws {
        // Given the 57-byte PNG
        let data = try XCTUnwrap(Data(base64Encoded: Self.hugeTextChunkPNG))
        XCTAssertEqual(data.count, 57)
        let peakBefore = Self.peakResidentKiB()

        // When it is decoded (as the fuzzer does: header, then pixels)
        XCTAssertThrowsError(try ImageDecoder.decode(data)) { error in
            XCTAssertTrue(error is ImageCodecError, "\(error)")
        }
        XCTAssertThrowsError(try ImageDecoder.info(data))

        // Then the process's peak memory did not grow by the declared gigabyte (ru_maxrss only ever grows)
        let growth = Self.peakResidentKiB() - peakBefore
        XCTAssertLessThan(growth, 256 * 1024, "peak RSS grew by \(growth) KiB")
    }

    /// The process's peak resident set size in KiB (`getrusage`'s `ru_maxrss`).
    static func peakResidentKiB() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss
    }
}
