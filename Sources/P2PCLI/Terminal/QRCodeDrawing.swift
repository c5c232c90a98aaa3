/// A QR code drawn with Unicode half blocks: one character cell holds two modules (top and bottom), so
/// the code is square on a terminal whose cells are about twice as tall as wide.
///
/// A dark module is the glyph's ink (`▀`, `▄`, `█`), a light one is blank. With colours the whole drawing,
/// quiet zone included, is black ink on a white background, whatever the terminal's theme; without
/// colours (a pipe, NO_COLOR) it is ink on the terminal's background, which a dark theme shows inverted
/// (most phone readers cope, and it prints right on paper).
struct QRCodeDrawing {
    /// Light modules around the code: the QR standard asks for 4, and a camera needs them to find the code
    /// against whatever the terminal shows around it.
    static let quietZone = 4

    let code: QRCode
    let colored: Bool

    /// The lines to print, top to bottom.
    var lines: [String] {
        let side = code.size + 2 * Self.quietZone
        let first = -Self.quietZone
        return stride(from: first, to: first + side, by: 2).map { top in
            var line = ""
            for column in first..<(first + side) {
                line.append(Self.cell(top: code.isDark(row: top, column: column), bottom: code.isDark(row: top + 1, column: column)))
            }
            // 30: black ink, 47: white background; reset at the end of each line so nothing leaks.
            return colored ? "\u{1B}[30;47m" + line + "\u{1B}[0m" : line
        }
    }

    static func cell(top: Bool, bottom: Bool) -> Character {
        switch (top, bottom) {
        case (true, true): "█"
        case (true, false): "▀"
        case (false, true): "▄"
        case (false, false): " "
        }
    }

    /// Reads a drawing (without colours) back into modules, quiet zone included: what a camera sees.
    static func modules(of lines: [String]) -> [[Bool]] {
        lines.flatMap { line -> [[Bool]] in
            let cells = Array(line)
            return [cells.map { $0 == "█" || $0 == "▀" }, cells.map { $0 == "█" || $0 == "▄" }]
        }
    }
}
