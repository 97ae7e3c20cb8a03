import CQREncode

/// Encodes text as a QR code with libqrencode (the only code touching that library).
public enum QRCodeEncoder {
    /// Why a QR code could not be made.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public var description: String
    }

    /// Encodes UTF-8 text in byte mode with error correction level M.
    /// - Throws: `Failure` if the text is too long for a QR code (about 2,300 bytes at level M).
    public static func encode(_ text: String) throws(Failure) -> QRMatrix {
        guard let code = QRcode_encodeString8bit(text, 0, QR_ECLEVEL_M) else {
            throw Failure(description: "the text (\(text.utf8.count) bytes) does not fit in a QR code")
        }
        defer { QRcode_free(code) }
        let size = Int(code.pointee.width)
        let data = UnsafeBufferPointer(start: code.pointee.data, count: size * size)
        return QRMatrix(size: size, modules: data.map { $0 & 1 == 1 })
    }
}
