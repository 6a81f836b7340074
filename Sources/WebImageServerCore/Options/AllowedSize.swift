/// A size free-form `/image` requests may ask for (`--allowed-sizes 400x300,800x0`): `w` and `h` as given, where
/// 0 stands for "not given" (the aspect ratio follows).
///
/// - Important: A value type; thread-safe.
public struct AllowedSize: Sendable, Hashable, CustomStringConvertible {
    /// The width a request gives, or `nil` for a request that gives none.
    public var width: Int?
    /// The height a request gives, or `nil` for a request that gives none.
    public var height: Int?

    /// Makes an allowed size; `nil` for a side the request does not give.
    public init(width: Int?, height: Int?) {
        self.width = width
        self.height = height
    }

    /// Reads `WxH` (`400x300`, `800x0`, `0x600`): decimal digits only, each 0…`ImageRequestOptions.maximumDimension`,
    /// not both 0. Returns `nil` for anything else.
    public init?(_ text: Substring) {
        let parts = text.split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2,
              let w = Self.side(parts[0]), let h = Self.side(parts[1]), w > 0 || h > 0 else { return nil }
        self.init(width: w > 0 ? w : nil, height: h > 0 ? h : nil)
    }

    /// Reads a comma-separated list of sizes (`400x300,800x0`).
    ///
    /// - Throws: `ImageServiceError.badOptions` naming the first entry that is not a size.
    public static func list(_ text: String) throws(ImageServiceError) -> [AllowedSize] {
        var sizes: [AllowedSize] = []
        for entry in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let size = AllowedSize(entry) else { throw .badOptions("allowed size \"\(entry.prefix(32))\": expected WxH") }
            sizes.append(size)
        }
        return sizes
    }

    /// `WxH`, with 0 for a side not given.
    public var description: String { "\(width ?? 0)x\(height ?? 0)" }

    private static func side(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 5, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let value = Int(text), value <= ImageRequestOptions.maximumDimension else { return nil }
        return value
    }
}
