/// The name a person probably meant when what they typed names nothing: "did you mean `send`?" for
/// `p2p sned`. A slip is at most one edit per three letters (a swap of two neighbouring letters counts
/// as one), and only one name may be that close: a guess between two would help nobody.
public enum NearestName {
    /// The name nearest to `typed` (case ignored), if near enough to be a slip and the only one that near.
    public static func closest(to typed: String, among names: [String]) -> String? {
        let scored = names.map { (name: $0, distance: editDistance(typed.lowercased(), $0)) }
        guard let best = scored.min(by: { $0.distance < $1.distance }) else { return nil }
        let allowed = max(1, (max(typed.count, best.name.count) + 2) / 3)
        guard best.distance <= allowed, scored.filter({ $0.distance == best.distance }).count == 1 else { return nil }
        return best.name
    }

    /// Edits (insert, delete, substitute, swap neighbours) that turn `a` into `b`: optimal string alignment.
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
