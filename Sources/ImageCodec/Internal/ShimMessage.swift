/// Turns a NUL-terminated message buffer filled by a `wi_` shim into a `String`.
enum ShimMessage {
    static func string(_ buffer: [CChar]) -> String {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
