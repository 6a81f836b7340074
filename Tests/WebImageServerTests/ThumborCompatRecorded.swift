// Placeholder until scripts/thumbor-compat/run.py --record runs.
struct ThumborCompatExpectation {
    var path: String
    var status: Int
    var format: String
    var width: Int
    var height: Int
    var thumborBytes: Int
}

enum ThumborCompatRecorded {
    static let images: [String: String] = [:]
    static let expectations: [ThumborCompatExpectation] = []
}
