import Foundation

extension ThumborPath {
    /// The presets a thumbor URL names with the `preset(NAME[,NAME…])` filter, or `nil` when it names none.
    ///
    /// `/SIGNATURE/filters:preset(card)/IMAGE` is the thumbor-style spelling of `/image?url=IMAGE&preset=card`: the
    /// same presets, merged by the same rules (`RequestResolution`), the same result. The filter stands alone: a URL
    /// that also gives a size, a crop box, `trim`, `fit-in`, flips, an alignment, `smart` or another filter is
    /// refused, since the preset decides all of those (and `--presets-only` serves nothing else).
    ///
    /// - Throws: `ImageServiceError.badOptions` for `preset()` without a name, given twice, or next to anything else.
    func presetNames() throws(ImageServiceError) -> String? {
        guard filters.hasPrefix("preset(") || filters.contains("):preset(") else { return nil }
        let parts = filters.components(separatedBy: "):")
        guard parts.count == 1, filters.hasSuffix(")") else {
            throw .badOptions("preset() stands alone: no other filter with it")
        }
        let names = String(filters.dropFirst("preset(".count).dropLast())
        guard !names.isEmpty, !names.contains("("), !names.contains(")") else {
            throw .badOptions("preset: expected preset(NAME) or preset(NAME,NAME)")
        }
        guard isPlain else {
            throw .badOptions("preset() stands alone: the preset sets the size, crop and fit")
        }
        return names
    }

    /// Whether the path gives nothing but its image (and filters): no trim, crop box, fit-in, size, flips,
    /// alignment or `smart`.
    var isPlain: Bool {
        trim == nil && crop == nil && fitIn == nil && width == .pixels(0) && height == .pixels(0)
            && !flipsHorizontally && !flipsVertically && horizontalAlignment == .center && verticalAlignment == .middle
            && !isSmart && !isDebug && !isMeta
    }
}
