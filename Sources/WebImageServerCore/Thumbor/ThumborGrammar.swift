/// The backtracking matcher of thumbor's route regex (libthumbor 2.0.2's `Url.regex()`, with Tornado's `$`),
/// part by part: each optional part offers its possible ends, preferred first (greedy parts: matched before
/// absent; the lazy signature and filters: shortest first), and the first combination that leaves a non-empty
/// image wins, as in Python's `re`.
///
/// - Important: Not thread-safe; one per parse.
struct ThumborGrammar {
    enum Part: Int, CaseIterable {
        case slash, security, debug, meta, trim, crop, fitIn, dimensions, horizontalAlignment, verticalAlignment,
             smart, filters, image
    }

    let bytes: [UInt8]
    /// The span each part matched (its trailing `/` included), `nil` when absent.
    var spans: [Range<Int>?] = Array(repeating: nil, count: Part.allCases.count)

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func match(part index: Int, at position: Int) -> Bool {
        guard let part = Part(rawValue: index) else { return false }
        if part == .image {
            // `(?P<image>.+)$`: at least one character, none a newline (`.`).
            guard position < bytes.count, !bytes[position...].contains(UInt8(ascii: "\n")) else { return false }
            spans[index] = position..<bytes.count
            return true
        }
        for end in candidates(part, at: position) {
            spans[index] = position..<end
            if match(part: index + 1, at: end) { return true }
        }
        spans[index] = nil
        return match(part: index + 1, at: position)
    }

    private func has(_ literal: String, at position: Int) -> Bool {
        let utf8 = literal.utf8
        guard position + utf8.count <= bytes.count else { return false }
        return zip(utf8, bytes[position...]).allSatisfy { $0 == $1 }
    }

    private func isDigit(_ index: Int) -> Bool {
        index < bytes.count && bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9")
    }

    private func digits(from index: Int) -> Int {
        var end = index
        while isDigit(end) { end += 1 }
        return end
    }

    private func slash(_ index: Int) -> Int? {
        index < bytes.count && bytes[index] == UInt8(ascii: "/") ? index + 1 : nil
    }

    private func firstLiteral(_ literals: [String], at position: Int) -> Int? {
        for literal in literals where has(literal, at: position) {
            if let end = slash(position + literal.utf8.count) { return end }
        }
        return nil
    }

    /// The ends `part` may match to from `position`, preferred first (absence is tried after them all).
    private func candidates(_ part: Part, at p: Int) -> [Int] {
        switch part {
        case .slash:
            return p < bytes.count && bytes[p] == UInt8(ascii: "/") ? [p + 1] : []
        case .security:
            // `(?:unsafe|(.+?))/`: `unsafe/`, then every non-empty lazy prefix ending before a `/`.
            var ends: [Int] = []
            if has("unsafe/", at: p) { ends.append(p + 7) }
            var i = p + 1
            while i < bytes.count, bytes[i - 1] != UInt8(ascii: "\n") {
                if bytes[i] == UInt8(ascii: "/") { ends.append(i + 1) }
                i += 1
            }
            return ends
        case .debug: return firstLiteral(["debug"], at: p).map { [$0] } ?? []
        case .meta: return firstLiteral(["meta"], at: p).map { [$0] } ?? []
        case .trim:
            guard has("trim", at: p) else { return [] }
            var ends: [Int] = []
            let afterTrim = p + 4
            var positions: [Int] = []
            if has(":top-left", at: afterTrim) { positions.append(afterTrim + 9) }
            if has(":bottom-right", at: afterTrim) { positions.append(afterTrim + 13) }
            positions.append(afterTrim)
            for q in positions {
                if bytes.indices.contains(q), bytes[q] == UInt8(ascii: ":"), isDigit(q + 1),
                   let end = slash(digits(from: q + 1)) { ends.append(end) }
                if let end = slash(q) { ends.append(end) }
            }
            return ends
        case .crop:
            // `\d+x\d+:\d+x\d+/`
            var q = p
            for separator in ["x", ":", "x", "/"] {
                guard isDigit(q) else { return [] }
                q = digits(from: q)
                guard has(separator, at: q) else { return [] }
                q += 1
            }
            return [q]
        case .fitIn:
            var q = p
            if has("adaptive-", at: q) { q += 9 }
            if has("full-", at: q) { q += 5 }
            return firstLiteral(["fit-in"], at: q).map { [$0] } ?? []
        case .dimensions:
            // `(-)?(\d+|orig)?x(-)?(\d+|orig)?/`
            func side(_ q: Int) -> Int {
                var q = q
                if q < bytes.count, bytes[q] == UInt8(ascii: "-") { q += 1 }
                if isDigit(q) { return digits(from: q) }
                return has("orig", at: q) ? q + 4 : q
            }
            let x = side(p)
            guard has("x", at: x), let end = slash(side(x + 1)) else { return [] }
            return [end]
        case .horizontalAlignment: return firstLiteral(["left", "right", "center"], at: p).map { [$0] } ?? []
        case .verticalAlignment: return firstLiteral(["top", "bottom", "middle"], at: p).map { [$0] } ?? []
        case .smart: return firstLiteral(["smart"], at: p).map { [$0] } ?? []
        case .filters:
            // `filters:(.+?\))/`: shortest first; `.` stops at a newline.
            guard has("filters:", at: p) else { return [] }
            var ends: [Int] = []
            var i = p + 9 // the `)` after at least one character
            while i + 1 < bytes.count, bytes[i - 1] != UInt8(ascii: "\n") {
                if bytes[i] == UInt8(ascii: ")"), bytes[i + 1] == UInt8(ascii: "/") { ends.append(i + 2) }
                i += 1
            }
            return ends
        case .image: return []
        }
    }
}
