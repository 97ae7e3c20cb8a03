public import Foundation

/// The file name of a recording, `toukan_{timestamp}.m4a` as the seed names it (`toukan_2024-01-15T14-30-00.m4a`).
///
/// The timestamp is the start of the recording in **UTC**, to the second. UTC, not local time: a laptop that travels
/// or a clock that leaves summer time would otherwise produce names that repeat (the hour from 02:00 to 03:00 happens
/// twice in autumn) or sort out of order; the history shows local time, the file name does not need to. Two
/// recordings started within one second get `-2`, `-3`, … before the extension, chosen from the names already there.
public struct RecordingName: Sendable, Hashable, Comparable, CustomStringConvertible {
    public static let prefix = "toukan_"
    public static let fileExtension = ".m4a"

    /// The start of the recording, a whole second (fractions are dropped when naming).
    public let startedAt: Date
    /// 1 for the plain name, 2… for the `-2`… suffix.
    public let sequence: Int

    /// - Parameters:
    ///   - startedAt: When recording started; truncated to the second.
    ///   - sequence: 1 for the plain name, 2 or more for a name that would otherwise collide.
    public init(startedAt: Date, sequence: Int = 1) {
        precondition(sequence >= 1, "a recording name's sequence starts at 1")
        self.startedAt = Date(timeIntervalSince1970: startedAt.timeIntervalSince1970.rounded(.down))
        self.sequence = sequence
    }

    /// The first free name for a recording started at `startedAt`, given the names already in the folder.
    /// - Parameters:
    ///   - startedAt: When recording started.
    ///   - existing: File names already present (other files are ignored).
    public static func next(startedAt: Date, existing: some Sequence<String>) -> RecordingName {
        let taken = Set(existing)
        var name = RecordingName(startedAt: startedAt)
        while taken.contains(name.fileName) {
            name = RecordingName(startedAt: startedAt, sequence: name.sequence + 1)
        }
        return name
    }

    /// `toukan_2024-01-15T14-30-00.m4a`, or `toukan_2024-01-15T14-30-00-2.m4a` for the second in that second.
    public var fileName: String {
        let parts = Self.calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: startedAt)
        func two(_ value: Int?) -> String { pad(value ?? 0, to: 2) }
        let stamp =
            "\(pad(parts.year ?? 0, to: 4))-\(two(parts.month))-\(two(parts.day))"
            + "T\(two(parts.hour))-\(two(parts.minute))-\(two(parts.second))"
        let suffix = sequence == 1 ? "" : "-\(sequence)"
        return Self.prefix + stamp + suffix + Self.fileExtension
    }

    public var description: String { fileName }

    /// Reads a name back; nil for anything that is not exactly a recording name (wrong shape, an impossible date
    /// such as February 30th, a suffix of 0, 1 or with a leading zero).
    public init?(fileName: String) {
        let bytes = Array(fileName.utf8)
        let prefix = Array(Self.prefix.utf8)
        let suffix = Array(Self.fileExtension.utf8)
        // "YYYY-MM-DDTHH-MM-SS" is 19 bytes.
        guard bytes.count >= prefix.count + 19 + suffix.count, bytes.starts(with: prefix),
            bytes.suffix(suffix.count).elementsEqual(suffix)
        else { return nil }
        let stamp = bytes[prefix.count..<prefix.count + 19]
        let rest = bytes[(prefix.count + 19)..<(bytes.count - suffix.count)]
        func number(_ offset: Int, _ length: Int) -> Int? {
            Self.decimal(stamp.dropFirst(offset).prefix(length))
        }
        let separators: [(Int, UInt8)] = [(4, 0x2D), (7, 0x2D), (10, 0x54), (13, 0x2D), (16, 0x2D)]
        guard separators.allSatisfy({ stamp[stamp.startIndex + $0.0] == $0.1 }),
            let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2)
        else { return nil }
        var sequence = 1
        if !rest.isEmpty {
            guard rest.first == 0x2D, rest.dropFirst().first != 0x30, let value = Self.decimal(rest.dropFirst()),
                value >= 2
            else { return nil }
            sequence = value
        }
        let components = DateComponents(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard let date = Self.calendar.date(from: components) else { return nil }
        let name = RecordingName(startedAt: date, sequence: sequence)
        // The calendar rolls February 30th over into March: refuse any name that does not come back unchanged.
        guard name.fileName == fileName else { return nil }
        self = name
    }

    public static func < (lhs: RecordingName, rhs: RecordingName) -> Bool {
        (lhs.startedAt, lhs.sequence) < (rhs.startedAt, rhs.sequence)
    }

    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// ASCII digits only (no sign, no spaces), at most 9 of them.
    private static func decimal(_ digits: some Collection<UInt8>) -> Int? {
        guard !digits.isEmpty, digits.count <= 9 else { return nil }
        var value = 0
        for digit in digits {
            guard (0x30...0x39).contains(digit) else { return nil }
            value = value * 10 + Int(digit - 0x30)
        }
        return value
    }
}

/// `value` in decimal with leading zeros up to `width` digits.
func pad(_ value: Int, to width: Int) -> String {
    let digits = String(value)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
