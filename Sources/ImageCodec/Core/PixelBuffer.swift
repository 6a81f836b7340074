import Foundation

/// A bitmap of 8-bit RGBA pixels: the pixels every decoder produces and every encoder and processor takes.
///
/// Rows are `bytesPerRow` apart (at least `width * 4`); channel order in memory is R, G, B, A.
/// Decoders write straight into the buffer's single allocation (one allocation per frame, no extra copies).
///
/// ```swift
/// var buffer = try PixelBuffer(width: 64, height: 32)          // zero-filled, premultiplied
/// buffer.setPixel(x: 3, y: 4, to: RGBA(r: 255, g: 0, b: 0, a: 255))
/// ```
///
/// - Important: A value type with copy-on-write storage: copies share pixels until one of them is mutated.
///   A `PixelBuffer` may be sent across threads; mutate a given copy from one thread at a time.
public struct PixelBuffer: Sendable {
    /// How the pixels are laid out.
    public enum PixelFormat: String, Sendable, Hashable {
        /// RGBA, 8 bits per channel, color premultiplied by alpha: the form `ImageCache` stores and renderers draw.
        case rgba8Premultiplied
        /// RGBA, 8 bits per channel, straight (unassociated) alpha: the form encoders take.
        case rgba8
    }

    /// Width in pixels (at least 1).
    public let width: Int
    /// Height in pixels (at least 1).
    public let height: Int
    /// Bytes from the start of one row to the start of the next (at least `width * 4`).
    public let bytesPerRow: Int
    /// The pixel layout.
    public private(set) var pixelFormat: PixelFormat
    @usableFromInline var storage: PixelStorage

    /// Total bytes held: `bytesPerRow * height`.
    public var byteCount: Int { bytesPerRow * height }

    /// Allocates a zero-filled (transparent black) buffer.
    ///
    /// - Parameters:
    ///   - bytesPerRow: row stride; `nil` (default) means `width * 4`.
    /// - Throws: `ImageCodecError.invalidDimensions` for a zero, negative or overflowing size.
    public init(width: Int, height: Int, pixelFormat: PixelFormat = .rgba8Premultiplied, bytesPerRow: Int? = nil) throws {
        try self.init(width: width, height: height, pixelFormat: pixelFormat, bytesPerRow: bytesPerRow, zeroed: true)
    }

    /// Allocates a buffer, zero-filled or not. `zeroed: false` is for decoders that write every byte
    /// (libjpeg, libpng): it skips calloc's clearing of reused heap memory (~6% of a 1080p JPEG decode).
    init(width: Int, height: Int, pixelFormat: PixelFormat, bytesPerRow: Int? = nil, zeroed: Bool) throws {
        guard width > 0, height > 0 else { throw ImageCodecError.invalidDimensions(width: width, height: height) }
        let (minRow, o1) = width.multipliedReportingOverflow(by: 4)
        let row = bytesPerRow ?? minRow
        guard !o1, row >= minRow else { throw ImageCodecError.invalidDimensions(width: width, height: height) }
        let (total, o2) = row.multipliedReportingOverflow(by: height)
        guard !o2 else { throw ImageCodecError.invalidDimensions(width: width, height: height) }
        self.width = width
        self.height = height
        self.bytesPerRow = row
        self.pixelFormat = pixelFormat
        guard let storage = PixelStorage(byteCount: total, zeroed: zeroed) else { throw ImageCodecError.allocationFailed(byteCount: total) }
        self.storage = storage
    }

    /// Makes a buffer from packed RGBA bytes (`width * height * 4` of them).
    ///
    /// - Throws: `ImageCodecError.invalidDimensions` when the byte count does not match.
    public init(width: Int, height: Int, pixelFormat: PixelFormat, bytes: [UInt8]) throws {
        try self.init(width: width, height: height, pixelFormat: pixelFormat)
        guard bytes.count == byteCount else { throw ImageCodecError.invalidDimensions(width: width, height: height) }
        bytes.withUnsafeBytes { storage.pointer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    }

    /// Calls `body` with the pixel bytes (`byteCount` of them, rows `bytesPerRow` apart).
    @inlinable
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: storage.pointer, count: byteCount))
    }

    /// Calls `body` with the pixel bytes for writing, first copying them if another buffer shares them.
    @inlinable
    public mutating func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        if !isKnownUniquelyReferenced(&storage) {
            storage = storage.copy()
        }
        return try body(UnsafeMutableRawBufferPointer(start: storage.pointer, count: byteCount))
    }

    /// Whether no other buffer shares these pixels (writing would not copy them). O(1).
    mutating func isUniquelyReferenced() -> Bool { isKnownUniquelyReferenced(&storage) }

    /// The pixels as packed RGBA bytes (`width * 4` per row, no padding). Copies.
    public var packedBytes: [UInt8] {
        var out = [UInt8](repeating: 0, count: width * height * 4)
        withUnsafeBytes { src in
            out.withUnsafeMutableBytes { dst in
                for y in 0..<height {
                    dst.baseAddress!.advanced(by: y * width * 4)
                        .copyMemory(from: src.baseAddress!.advanced(by: y * bytesPerRow), byteCount: width * 4)
                }
            }
        }
        return out
    }

    /// Reads one pixel. Traps if `(x, y)` is outside the buffer.
    public func pixel(x: Int, y: Int) -> RGBA {
        precondition(x >= 0 && x < width && y >= 0 && y < height, "pixel (\(x), \(y)) outside \(width)×\(height)")
        return withUnsafeBytes { b in
            let o = y * bytesPerRow + x * 4
            return RGBA(r: b[o], g: b[o + 1], b: b[o + 2], a: b[o + 3])
        }
    }

    /// Writes one pixel (in this buffer's pixel format). Traps if `(x, y)` is outside the buffer.
    public mutating func setPixel(x: Int, y: Int, to value: RGBA) {
        precondition(x >= 0 && x < width && y >= 0 && y < height, "pixel (\(x), \(y)) outside \(width)×\(height)")
        let o = y * bytesPerRow + x * 4
        withUnsafeMutableBytes { b in
            b[o] = value.r; b[o + 1] = value.g; b[o + 2] = value.b; b[o + 3] = value.a
        }
    }

    /// Whether every pixel has alpha 255. O(pixels).
    public var isOpaque: Bool {
        withUnsafeBytes { b in
            for y in 0..<height {
                let row = y * bytesPerRow
                var x = 3
                while x < width * 4 {
                    if b[row + x] != 255 { return false }
                    x += 4
                }
            }
            return true
        }
    }

    /// This buffer converted to `format` (premultiplying or un-premultiplying color). Returns `self` when
    /// already in that format.
    public func converted(to format: PixelFormat) -> PixelBuffer {
        guard format != pixelFormat else { return self }
        var copy = self
        copy.convert(to: format)
        return copy
    }

    /// Converts in place to `format`. O(pixels); no allocation when this buffer is not shared.
    public mutating func convert(to format: PixelFormat) {
        guard format != pixelFormat else { return }
        let premultiply = format == .rgba8Premultiplied
        let (w, h, stride) = (width, height, bytesPerRow)
        withUnsafeMutableBytes { b in
            for y in 0..<h {
                let row = y * stride
                for x in 0..<w {
                    let o = row + x * 4
                    let a = UInt32(b[o + 3])
                    if a == 255 { continue }
                    if premultiply {
                        // (c * a + 127) / 255, exact rounding.
                        for c in 0..<3 { b[o + c] = UInt8((UInt32(b[o + c]) * a + 127) / 255) }
                    } else if a == 0 {
                        b[o] = 0; b[o + 1] = 0; b[o + 2] = 0
                    } else {
                        for c in 0..<3 { b[o + c] = UInt8(min(255, (UInt32(b[o + c]) * 255 + a / 2) / a)) }
                    }
                }
            }
        }
        pixelFormat = format
    }
}

extension PixelBuffer: Equatable {
    /// Two buffers are equal when size, pixel format and every pixel match (row padding is ignored).
    public static func == (lhs: PixelBuffer, rhs: PixelBuffer) -> Bool {
        guard lhs.width == rhs.width, lhs.height == rhs.height, lhs.pixelFormat == rhs.pixelFormat else { return false }
        if lhs.storage === rhs.storage { return true }
        return lhs.withUnsafeBytes { a in
            rhs.withUnsafeBytes { b in
                for y in 0..<lhs.height {
                    if memcmp(a.baseAddress! + y * lhs.bytesPerRow, b.baseAddress! + y * rhs.bytesPerRow, lhs.width * 4) != 0 {
                        return false
                    }
                }
                return true
            }
        }
    }
}

/// One RGBA pixel, 8 bits per channel.
public struct RGBA: Sendable, Hashable, CustomStringConvertible {
    /// Red.
    public var r: UInt8
    /// Green.
    public var g: UInt8
    /// Blue.
    public var b: UInt8
    /// Alpha (255 = opaque).
    public var a: UInt8

    /// Makes a pixel; alpha defaults to opaque.
    public init(r: UInt8, g: UInt8, b: UInt8, a: UInt8 = 255) {
        self.r = r; self.g = g; self.b = b; self.a = a
    }

    /// A readable description, for logs and test failures.
    public var description: String { "RGBA(\(r), \(g), \(b), \(a))" }
}

/// The single allocation behind a `PixelBuffer`.
///
/// Buffers of `mappedThreshold` bytes or more get their own anonymous mapping (`mmap`), so freeing one returns
/// its pages to the system at once. glibc would do that only until it first frees such a block: then it raises
/// its mmap threshold (up to 32 MB), later bitmaps come from the heap, and a cache that evicts them keeps the
/// process's RSS far above its own limit (measured: 1.49 GB for a full 805 MB memory cache of 1000 × 1000
/// images; see `BoundedVolumeTests`). Freed mappings go to `PixelMappingPool` (at most 4 and 64 MiB), which
/// hands them to the next bitmaps of about their size without new page faults. Smaller buffers use
/// `calloc`/`malloc`.
///
/// `@unchecked Sendable`: the bytes are written only through `PixelBuffer.withUnsafeMutableBytes`, which
/// copies first unless the storage is uniquely referenced, so no two threads ever write or read-while-writing
/// the same storage through the public API.
@usableFromInline
final class PixelStorage: @unchecked Sendable {
    @usableFromInline let pointer: UnsafeMutableRawPointer
    let byteCount: Int
    /// The length of `pointer`'s own mapping (page-rounded, possibly a little more than `byteCount` when it
    /// was reused from `PixelMappingPool`); 0 for a heap block.
    private let mappedLength: Int

    /// Buffers this large or larger are mapped, not taken from the heap: 1 MiB (a 512 × 512 RGBA bitmap).
    static let mappedThreshold = 1 << 20

    /// Zero-filled bytes (or uninitialized with `zeroed: false`); `nil` when the allocation fails.
    init?(byteCount: Int, zeroed: Bool = true) {
        self.byteCount = byteCount
        if byteCount >= Self.mappedThreshold {
            if let reused = PixelMappingPool.take(length: byteCount) {
                if zeroed { memset(reused.pointer, 0, byteCount) }
                self.pointer = reused.pointer
                self.mappedLength = reused.length
                return
            }
            // Anonymous pages are zero and come from the kernel lazily, as calloc's would.
            let length = PixelMappingPool.pageRounded(byteCount)
            guard let p = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
                  p != MAP_FAILED else { return nil }
            self.pointer = p
            self.mappedLength = length
            return
        }
        // calloc: zero pages come from the kernel lazily, so a large buffer costs nothing until written.
        guard let p = zeroed ? calloc(max(byteCount, 1), 1) : malloc(max(byteCount, 1)) else { return nil }
        self.pointer = p
        self.mappedLength = 0
    }

    @usableFromInline func copy() -> PixelStorage {
        // A copy of a buffer that already exists: failing here means the process is out of memory.
        guard let other = PixelStorage(byteCount: byteCount, zeroed: false) else {
            fatalError("WebImage: out of memory copying \(byteCount) bytes of pixels")
        }
        other.pointer.copyMemory(from: pointer, byteCount: byteCount)
        return other
    }

    deinit {
        if mappedLength > 0 { PixelMappingPool.give(pointer, length: mappedLength) } else { free(pointer) }
    }
}
