/// A plain-text table with aligned columns: numbers right-aligned, text left-aligned.
///
/// ```
/// phase        images  source       bytes    time     p50      p99
/// cold             50  remote 50    4.1 MB   1.02 s   12.1 ms  80.2 ms
/// ```
///
/// - Important: A value type; not for concurrent mutation.
struct Table {
    private let header: [String]
    private let rightAligned: Set<Int>
    private var rows: [[String]] = []

    /// A table with these column titles; `rightAligned` lists the numeric columns.
    init(_ header: [String], rightAligned: Set<Int> = []) {
        self.header = header
        self.rightAligned = rightAligned
    }

    /// Appends a row (missing cells are blank).
    mutating func add(_ row: [String]) { rows.append(row) }

    /// The table as lines joined by newlines, with a rule under the header.
    func render() -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0.count > column ? $0[column].count : 0 }.max() ?? 0 }
        func line(_ row: [String]) -> String {
            header.indices.map { column in
                let cell = row.count > column ? row[column] : ""
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                return rightAligned.contains(column) ? pad + cell : cell + pad
            }.joined(separator: "  ")
        }
        let rule = widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")
        return ([line(header), rule] + rows.map(line)).joined(separator: "\n")
    }
}
