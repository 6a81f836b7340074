import Foundation
import ImageCodec
import TestSupport
import WebImageHEIF
import XCTest

/// Files whose item references libheif 1.15 would follow without end (a stack overflow: the process dies)
/// or into an exponential number of decodes. `make fuzz` found the first (an `iden`/`grid` loop); each must
/// come back as a typed error from both `decode` and `info`.
final class HEIFItemReferenceTests: XCTestCase {
    private func assertRefused(_ file: HEIFFileBuilder, mentioning phrase: String,
                               file sourceFile: StaticString = #filePath, line: UInt = #line) {
        let data = file.build()
        for (name, call) in [("decode", { _ = try HEIFDecoder().decode(data, options: DecodeOptions()) }),
                             ("info", { _ = try HEIFDecoder().info(data) })] as [(String, () throws -> Void)] {
            XCTAssertThrowsError(try call(), name, file: sourceFile, line: line) { error in
                guard case .corruptData(.heif, let message)? = error as? ImageCodecError else {
                    return XCTFail("\(name): \(error)", file: sourceFile, line: line)
                }
                XCTAssertTrue(message.contains(phrase), "\(name): \(message)", file: sourceFile, line: line)
            }
        }
    }

    func testTwoIdentityItemsDerivedFromEachOther() {
        assertRefused(HEIFFileBuilder(items: [.init(id: 1, type: "iden"), .init(id: 2, type: "iden")],
                                      references: [.init(type: "dimg", from: 1, to: [2]), .init(type: "dimg", from: 2, to: [1])]),
                      mentioning: "loop")
    }

    func testIdentityItemDerivedFromItself() {
        assertRefused(HEIFFileBuilder(items: [.init(id: 1, type: "iden")], references: [.init(type: "dimg", from: 1, to: [1])]),
                      mentioning: "loop")
    }

    /// A grid whose tile is an identity item derived from the grid.
    func testGridWhoseTileIsDerivedFromTheGrid() {
        assertRefused(HEIFFileBuilder(items: [.init(id: 1, type: "grid"), .init(id: 2, type: "iden")],
                                      references: [.init(type: "dimg", from: 1, to: [2, 2]), .init(type: "dimg", from: 2, to: [1])]),
                      mentioning: "loop")
    }

    /// Two coded images, each the alpha plane of the other: libheif decodes a master's alpha image, then
    /// that image's alpha image, and so on. (These have no real HEVC data, so without the check libheif
    /// would stop earlier; the check refuses the structure itself.)
    func testTwoImagesEachTheAlphaOfTheOther() {
        assertRefused(HEIFFileBuilder(items: [.init(id: 1, type: "hvc1"), .init(id: 2, type: "hvc1")],
                                      references: [.init(type: "auxl", from: 2, to: [1]), .init(type: "auxl", from: 1, to: [2])]),
                      mentioning: "loop")
    }

    /// A loop that only the second `iref` of the `meta` box closes, and one split over two `meta` boxes:
    /// libheif reads one of each, the check reads them all.
    func testLoopSplitOverTwoReferenceBoxes() {
        let builder = HEIFFileBuilder(items: [.init(id: 1, type: "iden"), .init(id: 2, type: "iden")],
                                      references: [.init(type: "dimg", from: 1, to: [2])])
        var data = builder.build()
        data += HEIFFileBuilder.box("meta", fullBox: 0,
                                    HEIFFileBuilder.box("iref", fullBox: 0, HEIFFileBuilder.box("dimg", HEIFFileBuilder.be16(2) + HEIFFileBuilder.be16(1) + HEIFFileBuilder.be16(1))))
        XCTAssertThrowsError(try HEIFDecoder().decode(data, options: DecodeOptions())) { error in
            guard case .corruptData(.heif, let message)? = error as? ImageCodecError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("loop"), message)
        }
    }

    /// A chain of identity items one past the depth libheif is allowed to follow; exactly at it, the file
    /// passes the check and libheif follows it to the end (the last identity item references nothing).
    func testChainOfDerivedImagesAtAndPastTheDepthLimit() {
        func chain(_ derived: Int) -> HEIFFileBuilder {
            let ids = (1...derived + 1).map(UInt16.init)
            return HEIFFileBuilder(items: ids.map { .init(id: $0, type: "iden") },
                                   references: ids.dropLast().map { .init(type: "dimg", from: $0, to: [$0 + 1]) })
        }
        let limit = HEIFDecoder.maximumReferenceDepth
        assertRefused(chain(limit + 1), mentioning: "deeper")
        assertRefused(chain(19_000), mentioning: "deeper")  // without the check: libheif's stack overflows (it allows 20,000 items)
        XCTAssertThrowsError(try HEIFDecoder().decode(chain(limit).build(), options: DecodeOptions())) { error in
            guard case .corruptData(.heif, let message)? = error as? ImageCodecError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("more than one reference image"), "libheif's own error at the end: \(message)")
        }
    }

    /// Grids of grids, each tile the same grid below: few bytes, 8^7 decodes of the one image at the bottom.
    func testGridsOfGridsMultiplyingDecodes() {
        let levels = 7
        let items = (1...levels).map { HEIFFileBuilder.Item(id: UInt16($0), type: "grid") } + [.init(id: UInt16(levels + 1), type: "iden")]
        let references = (1...levels).map { HEIFFileBuilder.Reference(type: "dimg", from: UInt16($0), to: Array(repeating: UInt16($0 + 1), count: 8)) }
        assertRefused(HEIFFileBuilder(items: items, references: references), mentioning: "decodes")
    }

    /// Random reference graphs against a reference model (transitive closure): the decoder refuses a file
    /// with "loop" exactly when the graph of `dimg` and reversed `auxl` edges has a cycle.
    func testRandomReferenceGraphsAgainstAModel() {
        let seed = UInt64.random(in: 1...UInt64.max)
        var generator = SplitMix64(seed: seed)
        for round in 0..<300 {
            let count = Int.random(in: 1...7, using: &generator)
            let items = (1...count).map { HEIFFileBuilder.Item(id: UInt16($0), type: ["iden", "grid", "hvc1", "iovl"].randomElement(using: &generator)!) }
            var references: [HEIFFileBuilder.Reference] = []
            var edges = Array(repeating: Array(repeating: false, count: count + 1), count: count + 1)
            for _ in 0..<Int.random(in: 0...count + 2, using: &generator) {
                let type = ["dimg", "auxl", "thmb"].randomElement(using: &generator)!
                let from = UInt16.random(in: 1...UInt16(count), using: &generator)
                let to = (0..<Int.random(in: 1...3, using: &generator)).map { _ in UInt16.random(in: 1...UInt16(count), using: &generator) }
                references.append(.init(type: type, from: from, to: to))
                for target in to {
                    if type == "dimg" { edges[Int(from)][Int(target)] = true }
                    if type == "auxl" { edges[Int(target)][Int(from)] = true }
                }
            }
            for k in 1...count { for i in 1...count where edges[i][k] { for j in 1...count where edges[k][j] { edges[i][j] = true } } }
            let hasLoop = (1...count).contains { edges[$0][$0] }
            let data = HEIFFileBuilder(items: items, references: references).build()
            var message = "no error"
            do { _ = try HEIFDecoder().decode(data, options: DecodeOptions()) } catch {
                if case .corruptData(_, let text)? = error as? ImageCodecError { message = text } else { message = "\(error)" }
            }
            guard message.contains("loop") == hasLoop else {
                return XCTFail("seed \(seed), round \(round): model says loop=\(hasLoop), decoder said \(message); \(references)")
            }
        }
    }
}
