import Foundation

/// BlurHash (woltapp/blurhash): a short base-83 string holding a few cosine components of an image, decoded
/// back into a blurred placeholder. Implemented from the algorithm's description (Algorithm.md): colour in linear
/// light, components `cos(π·i·x/w)·cos(π·j·y/h)`, DC as sRGB bytes, AC quantised to 19 levels after a signed
/// square root, against a maximum quantised to 83 levels.
///
/// ```swift
/// let hash = try BlurHash.encode(buffer, components: (x: 4, y: 3))   // "LFE.@D9F01_2%L%MIVD*9Goe-;WB"
/// let placeholder = try BlurHash.decode(hash, width: 32, height: 32)
/// ```
///
/// - Important: Stateless; thread-safe.
public enum BlurHash {
    static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~".utf8)
    static let digits: [UInt8: Int] = Dictionary(uniqueKeysWithValues: alphabet.enumerated().map { ($1, $0) })

    /// The BlurHash of `buffer`'s colour (alpha is ignored; premultiplied pixels are un-premultiplied first), with
    /// `components.x × components.y` components (1…9 each; 4 × 3 is the usual choice).
    ///
    /// - Throws: `PlaceholderHashError.invalidComponents`.
    /// - Important: O(pixels × (x + y)) by a separable sum; pure, thread-safe. Any size works; a thumbnail of
    ///   about 100 pixels gives the same hash to within a quantisation step, far faster.
    public static func encode(_ buffer: PixelBuffer, components: (x: Int, y: Int)) throws(PlaceholderHashError) -> String {
        let (cx, cy) = components
        guard (1...9).contains(cx), (1...9).contains(cy) else { throw .invalidComponents(x: cx, y: cy) }
        let image = buffer.converted(to: .rgba8)
        let (w, h) = (image.width, image.height)
        let linear = linearTable
        let cosX = (0..<cx).map { i in (0..<w).map { x in cos(Double.pi * Double(i) * Double(x) / Double(w)) } }
        let cosY = (0..<cy).map { j in (0..<h).map { y in cos(Double.pi * Double(j) * Double(y) / Double(h)) } }
        // factors[(j * cx + i) * 3 + channel]
        var factors = [Double](repeating: 0, count: cx * cy * 3)
        var rowSums = [Double](repeating: 0, count: cx * 3)
        image.withUnsafeBytes { bytes in
            for y in 0..<h {
                for k in rowSums.indices { rowSums[k] = 0 }
                let row = y * image.bytesPerRow
                for x in 0..<w {
                    let o = row + x * 4
                    let (r, g, b) = (linear[Int(bytes[o])], linear[Int(bytes[o + 1])], linear[Int(bytes[o + 2])])
                    for i in 0..<cx {
                        let c = cosX[i][x]
                        rowSums[i * 3] += c * r
                        rowSums[i * 3 + 1] += c * g
                        rowSums[i * 3 + 2] += c * b
                    }
                }
                for j in 0..<cy {
                    let c = cosY[j][y]
                    for i in 0..<cx {
                        let f = (j * cx + i) * 3
                        factors[f] += c * rowSums[i * 3]
                        factors[f + 1] += c * rowSums[i * 3 + 1]
                        factors[f + 2] += c * rowSums[i * 3 + 2]
                    }
                }
            }
        }
        let pixels = Double(w) * Double(h)
        for k in factors.indices { factors[k] *= (k < 3 ? 1 : 2) / pixels }

        var hash = [UInt8]()
        append(&hash, (cx - 1) + (cy - 1) * 9, length: 1)
        let maximumValue: Double
        if factors.count > 3 {
            let actualMaximum = factors[3...].map(abs).max() ?? 0
            let quantisedMaximum = max(0, min(82, Int((actualMaximum * 166 - 0.5).rounded(.down))))
            maximumValue = Double(quantisedMaximum + 1) / 166
            append(&hash, quantisedMaximum, length: 1)
        } else {
            maximumValue = 1
            append(&hash, 0, length: 1)
        }
        append(&hash, (sRGB(factors[0]) << 16) + (sRGB(factors[1]) << 8) + sRGB(factors[2]), length: 4)
        var k = 3
        while k < factors.count {
            func quantise(_ v: Double) -> Int {
                max(0, min(18, Int((signedPow(v / maximumValue, 0.5) * 9 + 9.5).rounded(.down))))
            }
            append(&hash, quantise(factors[k]) * 361 + quantise(factors[k + 1]) * 19 + quantise(factors[k + 2]), length: 2)
            k += 3
        }
        return String(decoding: hash, as: UTF8.self)
    }

    /// The `width × height` placeholder a BlurHash stands for (opaque, straight `rgba8`). `punch` scales the
    /// colour's variation (1, the default, as encoded; more is more contrast).
    ///
    /// - Throws: `PlaceholderHashError.malformedHash` (length, characters), `.invalidDecodeSize`.
    /// - Important: O(width × height × components); pure, thread-safe.
    public static func decode(_ hash: String, width: Int, height: Int, punch: Double = 1) throws(PlaceholderHashError) -> PixelBuffer {
        guard width > 0, height > 0, width <= PixelBuffer.maxProcessedPixelCount / height else {
            throw .invalidDecodeSize(width: width, height: height)
        }
        let chars = Array(hash.utf8)
        guard chars.count >= 6 else { throw .malformedHash("BlurHash of \(chars.count) characters, at least 6 expected") }
        let sizeFlag = try value(chars[0..<1])
        let (cx, cy) = (sizeFlag % 9 + 1, sizeFlag / 9 + 1)
        guard chars.count == 4 + 2 * cx * cy else {
            throw .malformedHash("BlurHash of \(chars.count) characters, \(4 + 2 * cx * cy) expected for \(cx)×\(cy) components")
        }
        let maximumValue = Double(try value(chars[1..<2]) + 1) / 166 * (punch.isFinite ? punch : 1)
        var colours = [Double](repeating: 0, count: cx * cy * 3)
        let dc = try value(chars[2..<6])
        guard dc < 1 << 24 else { throw .malformedHash("BlurHash DC value \(dc) is over 24 bits") }
        let linear = linearTable
        (colours[0], colours[1], colours[2]) = (linear[dc >> 16], linear[(dc >> 8) & 255], linear[dc & 255])
        for k in 1..<(cx * cy) {
            let ac = try value(chars[(4 + 2 * k)..<(6 + 2 * k)])
            colours[k * 3] = signedPow(Double(ac / 361 - 9) / 9, 2) * maximumValue
            colours[k * 3 + 1] = signedPow(Double((ac / 19) % 19 - 9) / 9, 2) * maximumValue
            colours[k * 3 + 2] = signedPow(Double(ac % 19 - 9) / 9, 2) * maximumValue
        }
        var out: PixelBuffer
        do { out = try PixelBuffer(width: width, height: height, pixelFormat: .rgba8) } catch {
            throw .invalidDecodeSize(width: width, height: height)
        }
        let cosX = (0..<cx).map { i in (0..<width).map { x in cos(Double.pi * Double(x) * Double(i) / Double(width)) } }
        let cosY = (0..<cy).map { j in (0..<height).map { y in cos(Double.pi * Double(y) * Double(j) / Double(height)) } }
        let stride = out.bytesPerRow
        out.withUnsafeMutableBytes { bytes in
            for y in 0..<height {
                for x in 0..<width {
                    var (r, g, b) = (0.0, 0.0, 0.0)
                    for j in 0..<cy {
                        for i in 0..<cx {
                            let basis = cosX[i][x] * cosY[j][y]
                            let k = (j * cx + i) * 3
                            r += colours[k] * basis
                            g += colours[k + 1] * basis
                            b += colours[k + 2] * basis
                        }
                    }
                    let o = y * stride + x * 4
                    bytes[o] = UInt8(sRGB(r)); bytes[o + 1] = UInt8(sRGB(g)); bytes[o + 2] = UInt8(sRGB(b)); bytes[o + 3] = 255
                }
            }
        }
        return out
    }

    /// sRGB byte → linear light.
    static let linearTable: [Double] = (0..<256).map { v in
        let c = Double(v) / 255
        return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
    }

    /// Linear light → sRGB byte, clamped.
    static func sRGB(_ value: Double) -> Int {
        let v = value.isNaN ? 0 : min(max(value, 0), 1)
        return v <= 0.0031308 ? Int(v * 12.92 * 255 + 0.5) : Int((1.055 * pow(v, 1 / 2.4) - 0.055) * 255 + 0.5)
    }

    static func signedPow(_ value: Double, _ exponent: Double) -> Double {
        value < 0 ? -pow(-value, exponent) : pow(value, exponent)
    }

    static func append(_ hash: inout [UInt8], _ value: Int, length: Int) {
        var divisor = 1
        for _ in 1..<max(length, 1) { divisor *= 83 }
        for _ in 0..<length {
            hash.append(alphabet[(value / divisor) % 83])
            divisor /= 83
        }
    }

    static func value(_ chars: ArraySlice<UInt8>) throws(PlaceholderHashError) -> Int {
        var result = 0
        for c in chars {
            guard let digit = digits[c] else { throw .malformedHash("character \(UnicodeScalar(c)) is not base 83") }
            result = result * 83 + digit
        }
        return result
    }
}
