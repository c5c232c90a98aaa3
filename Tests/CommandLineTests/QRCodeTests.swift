import Testing
@testable import P2PCLI

/// The QR code `p2p share` draws: libqrencode's modules read the right way, and a half-block drawing that
/// holds exactly those modules inside a 4-module quiet zone.
@Suite struct QRCodeTests {
    let url = "http://10.213.7.2:53317/"

    /// The finder pattern (7×7: a dark ring, a light ring, a dark 3×3 centre) whose top-left corner is at
    /// (`row`, `column`), with its light separator on the sides that face the code.
    func hasFinder(_ code: QRCode, row: Int, column: Int) -> Bool {
        for r in 0..<7 {
            for c in 0..<7 {
                let ring = max(abs(r - 3), abs(c - 3))
                if code.isDark(row: row + r, column: column + c) != (ring != 2) { return false }
            }
        }
        return true
    }

    @Test func libqrencodeGivesTheSmallestVersionWithItsThreeFinderPatterns() throws {
        let code = try QRCode(encoding: url)
        // 24 bytes at level M fit version 2 (up to 26 bytes): 25 × 25 modules.
        #expect(code.size == 25)
        #expect(hasFinder(code, row: 0, column: 0))
        #expect(hasFinder(code, row: 0, column: code.size - 7))
        #expect(hasFinder(code, row: code.size - 7, column: 0))
        #expect(!hasFinder(code, row: code.size - 7, column: code.size - 7))
        // The timing pattern between the top finders alternates, dark first.
        #expect((8..<(code.size - 8)).allSatisfy { code.isDark(row: 6, column: $0) == ($0 % 2 == 0) })
    }

    @Test func aLongerTextTakesALargerVersion() throws {
        let short = try QRCode(encoding: url)
        let long = try QRCode(encoding: "http://[fe80::1234:5678:9abc:def0%25p2pvB]:53317/" + String(repeating: "x", count: 40))
        #expect(long.size > short.size)
        #expect((long.size - 17) % 4 == 0)
    }

    @Test func tooMuchDataIsAClearError() {
        #expect(throws: QRCode.EncodingError.self) { try QRCode(encoding: String(repeating: "x", count: 3000)) }
    }

    @Test func theDrawingHoldsEveryModuleInsideAFourModuleQuietZone() throws {
        let code = try QRCode(encoding: url)
        let lines = QRCodeDrawing(code: code, colored: false).lines
        let side = code.size + 8
        #expect(lines.count == (side + 1) / 2)
        #expect(lines.allSatisfy { $0.count == side })
        let seen = QRCodeDrawing.modules(of: lines)
        for row in 0..<seen.count {
            for column in 0..<side {
                #expect(seen[row][column] == code.isDark(row: row - 4, column: column - 4), "row \(row) column \(column)")
            }
        }
        // The quiet zone is blank: the first two lines, and four cells on each side of every line.
        #expect(lines[0].allSatisfy { $0 == " " } && lines[1].allSatisfy { $0 == " " })
        #expect(lines.allSatisfy { $0.prefix(4).allSatisfy { $0 == " " } && $0.suffix(4).allSatisfy { $0 == " " } })
    }

    @Test func inColourEachLineIsBlackOnWhiteAndResetsAtItsEnd() throws {
        let lines = QRCodeDrawing(code: try QRCode(encoding: url), colored: true).lines
        #expect(lines.allSatisfy { $0.hasPrefix("\u{1B}[30;47m") && $0.hasSuffix("\u{1B}[0m") })
    }

    @Test func eachCellDrawsItsTwoModules() {
        #expect(QRCodeDrawing.cell(top: true, bottom: true) == "█")
        #expect(QRCodeDrawing.cell(top: true, bottom: false) == "▀")
        #expect(QRCodeDrawing.cell(top: false, bottom: true) == "▄")
        #expect(QRCodeDrawing.cell(top: false, bottom: false) == " ")
    }
}
