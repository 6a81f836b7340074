/// Why a signing key is refused (`URLSigner.init(key:)`, `URLSigner.keyBytes(hex:)`, `ImageService.init`).
///
/// A key short enough to guess is no key: a 2-byte key was recovered from one signed URL in 0.22 s (65,536
/// HMACs). Keys are refused when they are made, never used.
///
/// - Important: A value type; thread-safe.
public enum URLSignerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The key has fewer than `URLSigner.minimumKeyLength` bytes.
    case keyTooShort(bytes: Int, minimum: Int)
    /// The hex text has a character that is not a hex digit (`0-9`, `a-f`, `A-F`) at `offset` (in characters).
    /// Signs, spaces and `0x` prefixes are refused too: `+f` is not the byte `0f`.
    case notHex(offset: Int)
    /// The hex text has an odd number of digits (a byte is two).
    case oddLength(digits: Int)

    /// A one-line explanation, for the command line and logs (never the key itself).
    public var description: String {
        switch self {
        case .keyTooShort(let bytes, let minimum):
            return "the signing key is \(bytes) byte\(bytes == 1 ? "" : "s") long; at least \(minimum) are required (32 random bytes recommended)"
        case .notHex(let offset): return "the signing key is not hex: character \(offset + 1) is not a hex digit (0-9, a-f)"
        case .oddLength(let digits): return "the signing key has \(digits) hex digits; a key is an even number of them"
        }
    }
}
