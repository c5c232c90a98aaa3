import CQRencode
import Foundation

/// A QR code's modules as libqrencode encodes them: `size` × `size`, row by row, without the quiet zone.
struct QRCode: Sendable, Equatable {
    /// Why a text could not be encoded.
    enum EncodingError: Error, CustomStringConvertible {
        /// libqrencode refused it (too long for the largest QR code at this level, or out of memory).
        case refused(length: Int, errno: Int32)

        var description: String {
            switch self {
            case .refused(let length, let code):
                "could not draw a QR code for \(length) bytes (\(String(cString: strerror(code)))); open the URL by hand"
            }
        }
    }

    /// Modules per side.
    let size: Int
    /// Row-major; `true` is a dark module.
    private let modules: [Bool]

    /// Encodes `text` as 8-bit data at error-correction level M (15 % of the code may be damaged or
    /// glared on a screen and it still reads), in the smallest version that holds it.
    init(encoding text: String) throws(EncodingError) {
        guard let code = QRcode_encodeString8bit(text, 0, QR_ECLEVEL_M) else {
            throw .refused(length: text.utf8.count, errno: errno)
        }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        // libqrencode's byte per module: bit 0 says dark; the other bits describe what the module is for.
        let data = UnsafeBufferPointer(start: code.pointee.data, count: width * width)
        self.size = width
        self.modules = data.map { $0 & 1 == 1 }
    }

    /// Whether the module at (`row`, `column`) is dark; outside the code (the quiet zone) everything is light.
    func isDark(row: Int, column: Int) -> Bool {
        guard (0..<size).contains(row), (0..<size).contains(column) else { return false }
        return modules[row * size + column]
    }
}
