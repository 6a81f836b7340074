import Foundation
import WebImageServerCore
import XCTest

/// `gravity=` and `fp=` as /image reads them: every spelling, the limits exactly and one past, the two together.
final class CropGravityOptionTests: XCTestCase {
    func options(_ pairs: [(String, String)]) throws -> ImageRequestOptions {
        try ImageRequestOptions(pairs: [(name: "url", value: "http://a.example/x.jpg")] + pairs.map { (name: $0.0, value: $0.1) })
    }

    func testEveryGravityAndFocalPointParses() throws {
        XCTAssertEqual(try options([]).gravity, .center)
        for anchor in CropAnchor.allCases {
            XCTAssertEqual(try options([("gravity", anchor.rawValue)]).gravity, .anchor(anchor))
        }
        XCTAssertEqual(try options([("gravity", "smart")]).gravity, .smart)
        XCTAssertEqual(try options([("gravity", "entropy")]).gravity, .entropy)
        XCTAssertEqual(try options([("fp", "0,1")]).gravity, .focalPoint(x: 0, y: 1))
        XCTAssertEqual(try options([("fp", "0.25,0.75")]).gravity, .focalPoint(x: 0.25, y: 0.75))
        for bad in [("gravity", ""), ("gravity", "Center"), ("gravity", "northeast"), ("gravity", "smart "),
                    ("fp", ""), ("fp", "0.5"), ("fp", "0.5,0.5,0.5"), ("fp", "1.0001,0"), ("fp", "-0.0001,0"), ("fp", "nan,0"),
                    ("fp", "inf,0"), ("fp", "0.5,"), ("fp", ",0.5")] {
            XCTAssertThrowsError(try options([bad]), "\(bad)")
        }
        XCTAssertThrowsError(try options([("gravity", "north"), ("fp", "0.5,0.5")]))
        XCTAssertThrowsError(try options([("fp", "0.5,0.5"), ("gravity", "north")]))
    }

    func testTheGravityIsPartOfTheResultKey() throws {
        let keys = try [[], [("gravity", "north")], [("gravity", "smart")], [("gravity", "entropy")], [("fp", "0.1,0.2")],
                        [("fp", "0.2,0.1")]].map { try options($0).canonicalProcessing }
        XCTAssertEqual(Set(keys).count, keys.count, "\(keys)")
        XCTAssertEqual(try options([("gravity", "center")]).canonicalProcessing, try options([]).canonicalProcessing)
    }
}
