import ArgusAuth
import TestSupport
import Testing

@Suite("Pairing codes: six digits from a CSPRNG, checked strictly")
struct PairingCodeTests {
    @Test("always six ASCII digits, leading zeros kept, every digit equally likely")
    func sixDigits() {
        var generator = SplitMix64(seed: 7)
        var counts = [Int](repeating: 0, count: 10)
        for _ in 0..<20_000 {
            let code = PairingCode.generate(using: &generator)
            #expect(PairingCode.isWellFormed(code), "\(code)")
            for digit in code.utf8 { counts[Int(digit - UInt8(ascii: "0"))] += 1 }
        }
        // 120,000 digits, 12,000 expected each: chi-square with 9 degrees of freedom, p = 0.001 at 27.9
        let chiSquare = counts.map { Double($0 - 12_000) * Double($0 - 12_000) / 12_000 }.reduce(0, +)
        #expect(chiSquare < 27.9, "digit counts \(counts)")
        let codes = Set((0..<1000).map { _ in PairingCode.generate() })
        #expect(codes.count > 990, "the system generator repeats itself: \(codes.count) of 1000 distinct")
    }

    @Test(
        "anything but exactly six ASCII digits is refused",
        arguments: [
            "12345", "1234567", "12345a", " 123456", "123456 ", "١٢٣٤٥٦", "12 456", "", "+12345", "0x1234",
        ])
    func malformed(_ text: String) {
        #expect(!PairingCode.isWellFormed(text))
    }

    @Test("five guesses at one code: one chance in 200,000")
    func odds() {
        #expect(PairingCode.odds(guesses: PairingCode.wrongGuessesAllowed) == 5e-6)
        #expect(PairingCode.lifetime == 300)
    }
}
