import Foundation

/// A number of bytes as people read it: "512 B", "7.8 MiB" (binary units, one decimal).
public enum ByteCount {
    /// "512 B" below a KiB, else one decimal of the largest unit that keeps the number at 1 or more.
    public static func describe(_ count: UInt64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
    }
}
