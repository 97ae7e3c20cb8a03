import TestSupport

/// A deliberately simple, slow, obviously-correct model of arithmetic mod p = 2^255 − 19 on little-endian arrays
/// of 32-bit digits, used to check ``FieldElement25519``. It is variable time and only for tests.
enum ReferenceField {
    typealias Digits = [UInt32]

    /// p, eight digits.
    static let p: Digits = [0xFFFF_FFED] + Digits(repeating: 0xFFFF_FFFF, count: 6) + [0x7FFF_FFFF]

    /// Little-endian bytes to digits (any length that is a multiple of 4).
    static func digits(_ bytes: [UInt8]) -> Digits {
        stride(from: 0, to: bytes.count, by: 4).map { i in
            (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[i + $1]) << (8 * UInt32($1)) }
        }
    }

    /// Eight digits to 32 little-endian bytes.
    static func bytes(_ digits: Digits) -> [UInt8] {
        precondition(digits.count == 8)
        return digits.flatMap { d in (0..<4).map { UInt8(truncatingIfNeeded: d >> (8 * UInt32($0))) } }
    }

    /// 32 bytes with bit 255 cleared (RFC 7748 decodeUCoordinate), as eight digits (not reduced).
    static func decode(_ bytes: [UInt8]) -> Digits {
        var copy = bytes
        copy[31] &= 0x7F
        return digits(copy)
    }

    static func trimmed(_ a: Digits) -> Digits {
        var a = a
        while let last = a.last, last == 0 { a.removeLast() }
        return a
    }

    static func compare(_ a: Digits, _ b: Digits) -> Int {
        let a = trimmed(a)
        let b = trimmed(b)
        if a.count != b.count { return a.count < b.count ? -1 : 1 }
        for i in stride(from: a.count - 1, through: 0, by: -1) where a[i] != b[i] {
            return a[i] < b[i] ? -1 : 1
        }
        return 0
    }

    static func add(_ a: Digits, _ b: Digits) -> Digits {
        var result: Digits = []
        var carry: UInt64 = 0
        for i in 0..<max(a.count, b.count) {
            let sum = UInt64(i < a.count ? a[i] : 0) + UInt64(i < b.count ? b[i] : 0) + carry
            result.append(UInt32(truncatingIfNeeded: sum))
            carry = sum >> 32
        }
        if carry != 0 { result.append(UInt32(carry)) }
        return result
    }

    /// a − b for a ≥ b.
    static func subtract(_ a: Digits, _ b: Digits) -> Digits {
        precondition(compare(a, b) >= 0)
        var result: Digits = []
        var borrow: Int64 = 0
        for i in 0..<a.count {
            var difference = Int64(a[i]) - Int64(i < b.count ? b[i] : 0) - borrow
            borrow = 0
            if difference < 0 {
                difference += 1 << 32
                borrow = 1
            }
            result.append(UInt32(difference))
        }
        return result
    }

    static func multiply(_ a: Digits, _ b: Digits) -> Digits {
        var result = [UInt64](repeating: 0, count: a.count + b.count + 1)
        for i in 0..<a.count {
            var carry: UInt64 = 0
            for j in 0..<b.count {
                let t = UInt64(a[i]) * UInt64(b[j]) + result[i + j] + carry
                result[i + j] = t & 0xFFFF_FFFF
                carry = t >> 32
            }
            result[i + b.count] += carry
        }
        return result.map { UInt32($0) }
    }

    /// x mod p, as exactly eight digits: fold the bits above 255 back in (2^255 ≡ 19), then subtract p.
    static func reduce(_ x: Digits) -> Digits {
        var x = trimmed(x)
        while x.count > 8 || (x.count == 8 && x[7] >> 31 != 0) {
            // high = x >> 255, low = x mod 2^255
            var high: Digits = []
            for i in 7..<x.count {
                let next = i + 1 < x.count ? x[i + 1] : 0
                high.append((x[i] >> 31) | (next << 1))
            }
            var low = Array(x.prefix(8))
            low[7] &= 0x7FFF_FFFF
            x = trimmed(add(low, multiply(high, [19])))
        }
        while compare(x, p) >= 0 { x = trimmed(subtract(x, p)) }
        return x + Digits(repeating: 0, count: 8 - x.count)
    }

    static func addMod(_ a: Digits, _ b: Digits) -> Digits { reduce(add(a, b)) }
    static func subMod(_ a: Digits, _ b: Digits) -> Digits { reduce(subtract(add(reduce(a), p), reduce(b))) }
    static func mulMod(_ a: Digits, _ b: Digits) -> Digits { reduce(multiply(a, b)) }

    /// base^exponent mod p, exponent as little-endian bytes.
    static func powMod(_ base: Digits, _ exponent: [UInt8]) -> Digits {
        var result: Digits = [1, 0, 0, 0, 0, 0, 0, 0]
        for bit in (0..<(exponent.count * 8)).reversed() {
            result = mulMod(result, result)
            if (exponent[bit / 8] >> (bit % 8)) & 1 == 1 { result = mulMod(result, base) }
        }
        return result
    }

    static let pMinus2: [UInt8] = bytes(subtract(p, [2]))
    static let pMinus1Over2: [UInt8] = {
        // (p − 1) / 2 by shifting p − 1 right by one bit.
        let pMinus1 = subtract(p, [1])
        let shifted = (0..<8).map { i in (pMinus1[i] >> 1) | (i + 1 < 8 ? pMinus1[i + 1] << 31 : 0) }
        return bytes(shifted)
    }()

    static func inverse(_ a: Digits) -> Digits { powMod(a, pMinus2) }
    static func legendre(_ a: Digits) -> Digits { powMod(a, pMinus1Over2) }

    static func isSquare(_ a: Digits) -> Bool {
        compare(legendre(a), p.enumerated().map { $0.offset == 0 ? $0.element - 1 : $0.element }) != 0
    }

    static func small(_ value: UInt32) -> Digits { [value, 0, 0, 0, 0, 0, 0, 0] }

    /// Elligator 2 for Curve25519 in the RFC 9380 section 6.7.1 formulation (with an explicit branch on
    /// is_square, unlike the module's arithmetic form), returning the canonical u-coordinate.
    static func elligator2(_ r: Digits) -> Digits {
        let a = small(486_662)
        let one = small(1)
        let denominator = addMod(one, mulMod(small(2), mulMod(r, r)))
        let x1 = compare(denominator, []) == 0 ? subMod([], a) : mulMod(subMod([], a), inverse(denominator))
        let gx1 = addMod(addMod(mulMod(mulMod(x1, x1), x1), mulMod(a, mulMod(x1, x1))), x1)
        return isSquare(gx1) ? reduce(x1) : subMod(subMod([], x1), a)
    }
}
