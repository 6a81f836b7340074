import Foundation

/// The colour stage for decoders outside `ImageCodec` (the AVIF, HEIF and JPEG XL modules): decided once per
/// image from what the file said, then applied to each frame the decoder produces.
///
/// ```swift
/// let conversion = ColorConversion(colorSpace: described, management: options.colorManagement)
/// var buffer = decodeRGBA(straight: conversion.changesPixels)
/// conversion.apply(to: &buffer)
/// ```
///
/// Same rules as the built-in decoders (see `ColorManagement`): untagged and sRGB sources are not transformed;
/// bad colour data is ignored; CICP and PQ/HLG (tone-mapped to SDR) build their profile from the code points.
///
/// - Important: A value type; thread-safe. The transform inside is shared (and cached) between threads.
public struct ColorConversion: Sendable {
    private let plan: ColorPlan
    private let deepPlan: ColorPlan

    /// Decides what to do with RGB(A) pixels described by `colorSpace` under `management`. Not O(1) on the first
    /// use of a profile (parses it and builds the transforms, then cached).
    public init(colorSpace: ImageColorSpace?, management: ColorManagement) {
        plan = ColorStage.plan(colorSpace: colorSpace, layout: .rgba, management: management)
        deepPlan = plan.transform == nil ? plan : ColorStage.plan(colorSpace: colorSpace, layout: .rgba16, management: management)
    }

    /// Whether `convert(rgba16:bytesPerRow:into:)` can convert 16-bit pixels (a transform exists for them).
    public var convertsDeepPixels: Bool { deepPlan.transform?.layout == .rgba16 }

    /// Converts straight 16-bit RGBA rows (native byte order, `buffer.height` rows `bytesPerRow` apart) into
    /// `buffer`'s 8-bit straight pixels: deep sources are converted before they are reduced to 8 bits. Returns
    /// `false` (writing nothing) when `convertsDeepPixels` is false or the sizes do not fit.
    public func convert(rgba16 source: UnsafeRawBufferPointer, bytesPerRow: Int, into buffer: inout PixelBuffer) -> Bool {
        guard let transform = deepPlan.transform, transform.layout == .rgba16, buffer.pixelFormat == .rgba8,
              bytesPerRow >= buffer.width * 8, source.count >= bytesPerRow * buffer.height else { return false }
        transform.apply(rgba16: source, bytesPerRow: bytesPerRow, into: &buffer)
        return true
    }

    /// Whether `apply(to:)` changes pixels (decode straight alpha then, to save a premultiplication round trip).
    public var changesPixels: Bool { plan.transform != nil }

    /// The ICC profile the converted pixels are in, for `Image.pixelICCProfile`; `nil` for sRGB pixels.
    public var pixelICCProfile: Data? { plan.pixelICCProfile }

    /// Converts `buffer` in place. Premultiplied pixels are un-premultiplied first and premultiplied again after
    /// (alpha itself never changes). O(pixels) when `changesPixels`, else nothing.
    public func apply(to buffer: inout PixelBuffer) {
        guard plan.transform != nil else { return }
        let format = buffer.pixelFormat
        buffer.convert(to: .rgba8)
        plan.apply(to: &buffer)
        buffer.convert(to: format)
    }
}
