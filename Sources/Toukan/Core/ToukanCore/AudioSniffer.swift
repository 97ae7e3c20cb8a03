/// Recognises an MP4/M4A file from its first bytes, for the server's 415: the file must open with an `ftyp` box
/// (ISO/IEC 14496-12 §4.3) whose major brand, or one of its compatible brands, is an MP4 audio brand. It says what
/// was seen otherwise. The brand does not prove the audio is AAC; the worker's decoder is the final judge.
public enum AudioSniffer {
    /// Bytes to read from the start of a file to decide: the `ftyp` box with up to 14 compatible brands.
    public static let bytesNeeded = 64

    /// Brands of MP4 files that may hold AAC audio (`M4A `, `mp42`, `isom`, the `iso2`…`iso9` family, `dash`,
    /// `M4B ` audiobooks, and `mp41`).
    public static let acceptedBrands: Set<String> = [
        "M4A ", "M4B ", "mp41", "mp42", "isom", "iso2", "iso3", "iso4", "iso5", "iso6", "iso7", "iso8", "iso9",
        "dash", "3gp4", "3gp5", "3gp6",
    ]

    public enum Verdict: Sendable, Hashable {
        /// An MP4 audio file with this major brand.
        case mp4Audio(majorBrand: String)
        /// Not accepted; the message says what was seen.
        case refused(String)
    }

    /// Decides from the first bytes of a file (up to `bytesNeeded`; more are ignored).
    public static func sniff(_ prefix: some Collection<UInt8>) -> Verdict {
        let bytes = Array(prefix.prefix(bytesNeeded))
        func refuse(_ seen: String) -> Verdict {
            .refused("Only AAC audio in an MP4/M4A file is accepted; this is \(seen).")
        }
        guard !bytes.isEmpty else { return refuse("an empty file") }
        guard bytes.count >= 12 else { return refuse("only \(bytes.count) bytes, too short for an M4A file") }
        if fourCC(bytes, at: 4) == "ftyp" {
            let size = bytes[0..<4].reduce(0) { $0 << 8 | Int($1) }
            let major = fourCC(bytes, at: 8) ?? "????"
            guard size >= 16, size % 4 == 0 else {
                return refuse("an MP4 file whose ftyp box has an impossible size (\(size))")
            }
            let compatible = stride(from: 16, to: min(size, bytes.count) - 3, by: 4).compactMap {
                fourCC(bytes, at: $0)
            }
            if acceptedBrands.contains(major) || compatible.contains(where: acceptedBrands.contains) {
                return .mp4Audio(majorBrand: major)
            }
            return refuse("an MP4-family file of brand '\(printable(major))', not M4A audio")
        }
        if fourCC(bytes, at: 0) == "RIFF", fourCC(bytes, at: 8) == "WAVE" { return refuse("a WAV file (RIFF/WAVE)") }
        let known: [([UInt8], String)] = [
            (Array("ID3".utf8), "an MP3 file (ID3 tag)"), ([0xFF, 0xFB], "an MP3 file"), ([0xFF, 0xF3], "an MP3 file"),
            ([0xFF, 0xF1], "raw AAC (ADTS) without an MP4 container"),
            ([0xFF, 0xF9], "raw AAC (ADTS) without an MP4 container"), (Array("OggS".utf8), "an Ogg file"),
            (Array("fLaC".utf8), "a FLAC file"), ([0x1A, 0x45, 0xDF, 0xA3], "a Matroska/WebM file"),
            (Array("caff".utf8), "a Core Audio (CAF) file"), (Array("FORM".utf8), "an AIFF file"),
            ([0x1F, 0x8B], "a gzip archive"), (Array("PK".utf8), "a ZIP archive"),
        ]
        if let match = known.first(where: { bytes.starts(with: $0.0) }) { return refuse(match.1) }
        if let text = String(validating: bytes, as: UTF8.self),
            text.unicodeScalars.allSatisfy({ $0.value >= 0x20 || "\n\r\t".unicodeScalars.contains($0) })
        {
            return refuse("text (starting \(String(text.prefix(24)).debugDescription))")
        }
        return refuse("unrecognised data starting \(bytes.prefix(8).map { pad16($0) }.joined(separator: " "))")
    }

    private static func fourCC(_ bytes: [UInt8], at offset: Int) -> String? {
        guard offset + 4 <= bytes.count else { return nil }
        return String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
    }

    private static func printable(_ brand: String) -> String {
        String(brand.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : "?" })
    }

    private static func pad16(_ byte: UInt8) -> String { lowercaseHex([byte]) }
}
