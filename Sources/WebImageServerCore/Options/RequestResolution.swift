/// Turns the pairs of a request into its options under the service's presets and allowed sizes: expands
/// `preset=a,b` (left to right, then the request's own options on top), refuses anything but presets when
/// `presetsOnly`, and a free-form size not in `allowedSizes`.
///
/// - Important: A value type; thread-safe.
public struct RequestResolution: Sendable {
    /// The presets by name.
    public let presets: [String: ImagePreset]
    /// Whether only `url`, `preset` and `sig` may be given.
    public let presetsOnly: Bool
    /// The sizes a request's own `w`/`h` may name; empty: any.
    public let allowedSizes: Set<AllowedSize>

    /// Options that set one thing and exclude each other: the later one replaces the earlier when presets merge.
    static let sameSetting: [Set<String>] = [["gravity", "fp"]]

    /// The most presets one request may name: 8.
    public static let maximumPresetsPerRequest = 8

    /// Makes the resolution of a service configured with these presets, `presetsOnly` and allowed sizes.
    public init(presets: [ImagePreset], presetsOnly: Bool, allowedSizes: [AllowedSize]) {
        var byName: [String: ImagePreset] = [:]
        for preset in presets { byName[preset.name] = preset } // a later definition of a name replaces an earlier one
        self.presets = byName
        self.presetsOnly = presetsOnly
        self.allowedSizes = Set(allowedSizes)
    }

    /// The options `pairs` ask for (`sig` is ignored here; it is checked before).
    ///
    /// - Throws: `ImageServiceError.badOptions` for an unknown preset, a free-form option under `presetsOnly`, a
    ///   size not allowed, or options that do not parse.
    public func options(for pairs: [(name: String, value: String)]) throws(ImageServiceError) -> ImageRequestOptions {
        let presetPair = pairs.first { $0.name == "preset" }
        if presetsOnly {
            guard presetPair != nil else { throw .badOptions("preset is required: this server serves presets only") }
            if let other = pairs.first(where: { !["url", "preset", "sig"].contains($0.name) }) {
                throw .badOptions("\(other.name.prefix(32)) is not allowed: this server serves presets only")
            }
        }
        guard let presetPair else {
            try checkSize(pairs)
            return try ImageRequestOptions(pairs: pairs)
        }
        guard pairs.filter({ $0.name == "preset" }).count == 1 else { throw .badOptions("preset given more than once") }
        let names = presetPair.value.split(separator: ",", omittingEmptySubsequences: false)
        guard names.count <= Self.maximumPresetsPerRequest else {
            throw .badOptions("preset: at most \(Self.maximumPresetsPerRequest) presets")
        }
        // Merge: presets left to right, then the request's own options, each name once in its first place.
        var merged: [(name: String, value: String)] = []
        func set(_ name: String, _ value: String) {
            // Options that say the same thing two ways replace each other (a preset's `gravity`, the request's `fp`).
            if let group = Self.sameSetting.first(where: { $0.contains(name) }) {
                merged.removeAll { $0.name != name && group.contains($0.name) }
            }
            if let index = merged.firstIndex(where: { $0.name == name }) { merged[index].value = value } else { merged.append((name, value)) }
        }
        for name in names {
            guard let preset = presets[String(name)] else { throw .badOptions("unknown preset \(name.prefix(64))") }
            for option in preset.options { set(option.name, option.value) }
        }
        let own = pairs.filter { $0.name != "preset" }
        try checkSize(own)
        var seen = Set<String>()
        for group in Self.sameSetting where own.filter({ group.contains($0.name) }).count > 1 {
            throw .badOptions("\(group.sorted().joined(separator: " and ")) exclude each other")
        }
        for pair in own {
            guard seen.insert(pair.name).inserted else { throw .badOptions("\(pair.name) given more than once") }
            set(pair.name, pair.value)
        }
        return try ImageRequestOptions(pairs: merged)
    }

    /// Whether `pairs` name a quality (`q`), themselves or through a preset they name: if not, the service's
    /// default quality applies.
    public func setsQuality(_ pairs: [(name: String, value: String)]) -> Bool {
        if pairs.contains(where: { $0.name == "q" }) { return true }
        guard let names = pairs.first(where: { $0.name == "preset" })?.value.split(separator: ",") else { return false }
        return names.contains { presets[String($0)]?.options.contains { $0.name == "q" } ?? false }
    }

    /// Checks options a request spelled out another way (a thumbor URL): none under `presetsOnly`, and with
    /// `allowedSizes` their `w`/`h` must be one of them.
    ///
    /// - Throws: `ImageServiceError.badOptions`.
    public func checkFreeForm(_ options: ImageRequestOptions) throws(ImageServiceError) {
        guard !presetsOnly else { throw .badOptions("this server serves presets only (/image?preset=…)") }
        guard !allowedSizes.isEmpty, options.width != nil || options.height != nil else { return }
        let asked = AllowedSize(width: options.width, height: options.height)
        guard allowedSizes.contains(asked) else { throw .badOptions("size \(asked) is not an allowed size") }
    }

    /// With `allowedSizes`, a request's own `w`/`h` (not a preset's) must be one of them.
    private func checkSize(_ pairs: [(name: String, value: String)]) throws(ImageServiceError) {
        guard !allowedSizes.isEmpty else { return }
        let w = pairs.first { $0.name == "w" }?.value, h = pairs.first { $0.name == "h" }?.value
        guard w != nil || h != nil else { return }
        let asked = AllowedSize(width: w.flatMap { Int($0) }, height: h.flatMap { Int($0) })
        // A value that is not a number is left to the options' own error.
        guard (w == nil || asked.width != nil), (h == nil || asked.height != nil) else { return }
        guard allowedSizes.contains(asked) else { throw .badOptions("size \(asked) is not an allowed size") }
    }
}
