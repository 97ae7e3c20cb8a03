/// The top-level structure of an MP4 (ISO BMFF) file: a sequence of boxes, each `size` (32 bits, or 1 and a 64-bit
/// size after the type, or 0 for "to the end") and a four-character type, that must end exactly at the end of the
/// file. A file that holds good audio and then something else (garbage written after a fragment, a second file
/// glued on, a cut) decodes as its good part alone, silently: this says where it stops being MP4.
public enum MP4Boxes {
    /// How a file's top-level boxes came out.
    public enum Structure: Sendable, Hashable {
        /// Boxes from the first byte to the last; their types in order.
        case whole(types: [String])
        /// Boxes up to `validBytes`, then something that is not a box of the file (`reason` says what).
        case damaged(validBytes: Int64, reason: String)
    }

    /// Most boxes a file may have at the top level (fragments of 0.5 s make 14,400 an hour; this is a day and more).
    public static let maximumBoxes = 400_000

    /// Walks the top-level boxes of a file of `size` bytes.
    /// - Parameters:
    ///   - size: The file's length in bytes.
    ///   - header: Up to 16 bytes of the file from an offset (fewer only at its end).
    /// - Throws: What `header` throws.
    public static func walk(size: Int64, header: (Int64) throws -> [UInt8]) rethrows -> Structure {
        var offset: Int64 = 0
        var types: [String] = []
        while offset < size {
            guard types.count < maximumBoxes else {
                return .damaged(validBytes: offset, reason: "more than \(maximumBoxes) boxes")
            }
            let bytes = try header(offset)
            guard bytes.count >= 8 else {
                return .damaged(validBytes: offset, reason: "\(size - offset) bytes left, too few for a box")
            }
            let type = Array(bytes[4..<8])
            guard type.allSatisfy(isTypeCharacter) else {
                return .damaged(validBytes: offset, reason: "no box type there (bytes \(hex(type)))")
            }
            let name = String(type.map { Character(Unicode.Scalar($0)) })  // ISO 8859-1: 0xA9 is ©
            var length = Int64(bigEndian32(bytes, at: 0))
            var headerLength: Int64 = 8
            if length == 1 {
                guard bytes.count >= 16 else {
                    return .damaged(validBytes: offset, reason: "the '\(name)' box's 64-bit length is cut off")
                }
                length = Int64(bitPattern: UInt64(bigEndian32(bytes, at: 8)) << 32 | UInt64(bigEndian32(bytes, at: 12)))
                headerLength = 16
            } else if length == 0 {
                length = size - offset  // to the end of the file
            }
            guard length >= headerLength else {
                return .damaged(validBytes: offset, reason: "the '\(name)' box claims \(length) bytes")
            }
            guard length <= size - offset else {
                return .damaged(
                    validBytes: offset,
                    reason: "the '\(name)' box claims \(length) bytes but only \(size - offset) are left")
            }
            types.append(name)
            offset += length
        }
        return .whole(types: types)
    }

    /// Letters, digits, space and © (QuickTime's metadata types start with it), as box types are written.
    static func isTypeCharacter(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x20
            || byte == 0xA9
    }

    static func bigEndian32(_ bytes: [UInt8], at index: Int) -> UInt32 {
        bytes[index..<index + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16, uppercase: false) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined()
    }
}
