/// The list grammar shared by HTTP fields (RFC 9110 §5.6): comma-separated elements, each a token with an
/// optional `=` argument (a token or a quoted-string), with optional whitespace around.
///
/// Reads bytes by hand and never traps: an element that does not fit the grammar is skipped (and reported,
/// so that a caller can treat a malformed directive as the RFC says), a comma inside a quoted string does not
/// split, an unterminated quoted string runs to the end of its field line. Several field lines of the same
/// name are one list (RFC 9110 §5.3): pass them all.
///
/// - Important: Pure functions; thread-safe.
enum HTTPFieldList {
    /// One element: a lowercased name and its argument (quotes removed, escapes resolved), if any.
    struct Element: Equatable {
        var name: String
        var argument: String?
    }

    /// The elements of every line, in order; `malformed` counts the non-empty elements that did not parse.
    static func elements(of lines: [String]) -> (elements: [Element], malformed: Int) {
        var elements: [Element] = [], malformed = 0
        for line in lines {
            var reader = Reader(Array(line.utf8))
            while !reader.isAtEnd {
                switch reader.element() {
                case .element(let element): elements.append(element)
                case .empty: break
                case .malformed: malformed += 1
                }
            }
        }
        return (elements, malformed)
    }

    /// Whether `byte` is a `tchar` (RFC 9110 §5.6.2).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    /// Whether `text` is a non-empty token.
    static func isToken(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTokenByte)
    }

    private enum Parsed { case element(Element), empty, malformed }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var isAtEnd: Bool { index >= bytes.count }
        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x09 { index += 1 }
        }

        /// Skips to just past the next comma outside quotes (or the end).
        mutating func skipElement() {
            var quoted = false
            while let byte = current {
                index += 1
                if quoted {
                    if byte == UInt8(ascii: "\\") { index += 1 } else if byte == UInt8(ascii: "\"") { quoted = false }
                } else if byte == UInt8(ascii: "\"") {
                    quoted = true
                } else if byte == UInt8(ascii: ",") {
                    return
                }
            }
        }

        mutating func token() -> String? {
            let start = index
            while let byte = current, HTTPFieldList.isTokenByte(byte) { index += 1 }
            return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
        }

        /// A quoted-string after its opening quote; nil when it is not closed before the end.
        mutating func quotedString() -> String? {
            var value: [UInt8] = []
            while let byte = current {
                index += 1
                switch byte {
                case UInt8(ascii: "\""): return String(decoding: value, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard let escaped = current else { return nil }
                    value.append(escaped)
                    index += 1
                default: value.append(byte)
                }
            }
            return nil
        }

        /// Reads one element and the comma after it.
        mutating func element() -> Parsed {
            skipWhitespace()
            if current == UInt8(ascii: ",") { index += 1; return .empty }
            if isAtEnd { return .empty }
            guard let name = token() else { skipElement(); return .malformed }
            skipWhitespace()
            var argument: String?
            if current == UInt8(ascii: "=") {
                index += 1
                skipWhitespace()
                if current == UInt8(ascii: "\"") {
                    index += 1
                    guard let quoted = quotedString() else { index = bytes.count; return .malformed }
                    argument = quoted
                } else if let value = token() {
                    argument = value
                } else if current == nil || current == UInt8(ascii: ",") {
                    argument = "" // `name=` with nothing after it: an empty (invalid) argument, for the caller to judge
                } else {
                    skipElement()
                    return .malformed
                }
                skipWhitespace()
            }
            guard current == nil || current == UInt8(ascii: ",") else { skipElement(); return .malformed }
            if current != nil { index += 1 }
            return .element(Element(name: name.lowercased(), argument: argument))
        }
    }
}
