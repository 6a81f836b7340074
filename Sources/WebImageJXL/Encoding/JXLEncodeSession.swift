internal import CWebImageJXL
import Foundation
import ImageCodec

/// One `JxlEncoder` and the output it has written so far; destroyed with the session.
///
/// - Important: Not thread-safe; owned by one encode call.
final class JXLEncodeSession {
    let encoder: OpaquePointer
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)
    private var used = 0

    init() throws {
        guard let encoder = JxlEncoderCreate(nil) else {
            throw ImageCodecError.encodingFailed(format: .jpegXL, message: "JxlEncoderCreate")
        }
        self.encoder = encoder
    }

    deinit { JxlEncoderDestroy(encoder) }

    /// Throws `encodingFailed` with libjxl's error code unless `status` is `JXL_ENC_SUCCESS`.
    func check(_ status: JxlEncoderStatus, _ call: String) throws {
        guard status == JXL_ENC_SUCCESS else {
            throw ImageCodecError.encodingFailed(format: .jpegXL,
                                                 message: "\(call): libjxl error \(JxlEncoderGetError(encoder).rawValue)")
        }
    }

    /// Runs `JxlEncoderProcessOutput` until what was added is written, growing the output, checking the deadline
    /// between calls.
    func drain(_ options: EncodeOptions) throws {
        while true {
            if used == buffer.count { buffer.append(contentsOf: repeatElement(0, count: buffer.count)) }
            var avail = buffer.count - used
            let status = buffer.withUnsafeMutableBufferPointer { out -> JxlEncoderStatus in
                var next: UnsafeMutablePointer<UInt8>? = out.baseAddress! + used
                let status = JxlEncoderProcessOutput(encoder, &next, &avail)
                used = next! - out.baseAddress!
                return status
            }
            if status == JXL_ENC_NEED_MORE_OUTPUT {
                try options.checkDeadline(.jpegXL)
                continue
            }
            try check(status, "JxlEncoderProcessOutput")
            return
        }
    }

    /// The bytes written so far.
    func output() -> Data { Data(buffer[0..<used]) }
}
