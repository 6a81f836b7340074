import Foundation
internal import CWebImageCodecShims

/// Moves the malloc'd output of a `wi_*_encode_*` shim into `Data` and frees it.
enum EncodedBytes {
    static func collect(format: ImageFormat,
                        _ call: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, UnsafeMutablePointer<Int>,
                                 UnsafeMutablePointer<CChar>) -> wi_status) throws -> Data {
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        var message = [CChar](repeating: 0, count: Int(WI_MESSAGE_MAX))
        let status = message.withUnsafeMutableBufferPointer { call(&out, &size, $0.baseAddress!) }
        defer { wi_free(out) }
        guard status == WI_OK, let out else {
            throw ImageCodecError.encodingFailed(format: format, message: ShimMessage.string(message))
        }
        return Data(bytes: out, count: size)
    }
}
