/// An entity tag (RFC 9110 §8.8.3): `"xyzzy"` or the weak `W/"xyzzy"`.
///
/// Parsing keeps a revalidation header (`If-None-Match`) well formed: a value with a space, a control
/// character or a comma outside the quotes is not used as a validator. An unquoted tag of visible characters
/// (`ETag: abc123`, which misconfigured servers send) is kept as sent, as browsers do, so those servers can
/// still answer 304. Tags over `maximumLength` bytes are refused too: a validator is stored with every cached entry and sent with every revalidation, and no real
/// server needs more (nginx's are about 20 bytes).
///
/// - Important: Pure functions; thread-safe.
public enum EntityTag {
    /// The longest tag kept, quotes included: 256 bytes.
    public static let maximumLength = 256

    /// The tag as sent (quotes and any `W/` kept, surrounding whitespace removed), or nil when `text` is not
    /// one entity tag of at most `maximumLength` bytes.
    public static func parse(_ text: some StringProtocol) -> String? {
        let bytes = Array(text.utf8.trimmingHTTPWhitespace())
        guard bytes.count <= maximumLength else { return nil }
        var body = bytes[...]
        if body.starts(with: Array("W/".utf8)) { body = body.dropFirst(2) }
        guard !body.isEmpty else { return nil }
        guard body.count >= 2, body.first == UInt8(ascii: "\""), body.last == UInt8(ascii: "\"") else {
            let isLooseByte: (UInt8) -> Bool = { (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: ",") }
            return bytes.allSatisfy(isLooseByte) ? String(decoding: bytes, as: UTF8.self) : nil
        }
        // etagc = %x21 / %x23-7E / obs-text (%x80-FF): no space, no quote, no control character.
        let isTagByte: (UInt8) -> Bool = { $0 == 0x21 || (0x23...0x7E).contains($0) || $0 >= 0x80 }
        guard body.dropFirst().dropLast().allSatisfy(isTagByte) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
