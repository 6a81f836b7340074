import Foundation

/// A named set of `/image` options (`--preset thumb=w=200&h=200&fit=cover`), used as `preset=thumb`.
///
/// A preset holds any option but `url`, `sig` and `preset`. Several presets apply left to right
/// (`preset=thumb,webp`: a later one's option replaces an earlier one's), then the request's own options replace
/// theirs (unless the service serves presets only).
///
/// - Important: A value type; thread-safe.
public struct ImagePreset: Sendable, Hashable {
    /// The name used in `preset=`: letters, digits, `-` and `_`, 1…64 of them.
    public let name: String
    /// The options, in the order given.
    public let options: [QueryPair]

    /// Makes a preset named `name` holding `options`.
    ///
    /// - Throws: `ImageServiceError.badOptions` for a bad name, or options that name `url`, `sig` or `preset`,
    ///   repeat a name, or do not parse as `/image` options.
    public init(name: String, options: [(name: String, value: String)]) throws(ImageServiceError) {
        guard (1...64).contains(name.utf8.count),
              name.utf8.allSatisfy({ $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }) else {
            throw .badOptions("preset name \"\(name.prefix(64))\": expected 1 to 64 letters, digits, - or _")
        }
        var seen = Set<String>()
        for option in options {
            guard !["url", "sig", "preset"].contains(option.name) else {
                throw .badOptions("preset \(name): \(option.name) cannot be part of a preset")
            }
            guard seen.insert(option.name).inserted else { throw .badOptions("preset \(name): \(option.name) given more than once") }
        }
        // The options must be valid on their own (checked against a placeholder source).
        do {
            _ = try ImageRequestOptions(pairs: [("url", "http://preset.invalid/")] + options)
        } catch {
            throw .badOptions("preset \(name): \(error.detail)")
        }
        self.name = name
        self.options = options.map { QueryPair(name: $0.name, value: $0.value) }
    }

    /// Reads `NAME=OPTIONS` (`thumb=w=200&h=200&fit=cover`; the options percent-encoded as in a query).
    ///
    /// - Throws: `ImageServiceError.badOptions` naming what is wrong.
    public init(definition: String) throws(ImageServiceError) {
        guard let equals = definition.firstIndex(of: "=") else {
            throw .badOptions("preset \"\(definition.prefix(64))\": expected NAME=OPTIONS")
        }
        let options = try QueryString.parse(definition[definition.index(after: equals)...])
        try self.init(name: String(definition[..<equals]), options: options)
    }

    /// Reads a presets file: one `NAME=OPTIONS` per line; blank lines and lines starting with `#` are skipped.
    ///
    /// - Throws: `ImageServiceError.badOptions` naming the line.
    public static func presets(file contents: String) throws(ImageServiceError) -> [ImagePreset] {
        var presets: [ImagePreset] = []
        for (index, line) in contents.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.isEmpty || text.hasPrefix("#") { continue }
            do { presets.append(try ImagePreset(definition: text)) } catch {
                throw .badOptions("line \(index + 1): \(error.detail)")
            }
        }
        return presets
    }
}

/// One `name=value` pair of a query (a `Hashable` form of the tuples `QueryString.parse` returns).
public struct QueryPair: Sendable, Hashable {
    /// The decoded name.
    public var name: String
    /// The decoded value.
    public var value: String

    /// Makes a pair.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

extension UInt8 {
    var isASCIILetterOrDigit: Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self)
    }
}

extension ImageServiceError {
    /// The message of a `.badOptions`, else the description: for errors that wrap another's text.
    public var detail: String {
        if case .badOptions(let message) = self { return message }
        return description
    }
}
