import TestSupport
import Testing

@testable import CPace

/// FieldElement25519 and Elligator2 against the slow ``ReferenceField`` model.
@Suite("GF(2^255 − 19) arithmetic and Elligator 2")
struct FieldElementTests {
    typealias F = FieldElement25519
    typealias R = ReferenceField

    /// Edge encodings: 0, 1, p − 1, p, p + 1, 2^255 − 1, and two with bit 255 set (ignored by decoding).
    static let edgeEncodings: [[UInt8]] = {
        let p = R.bytes(R.p)
        let pMinus1 = R.bytes(R.subtract(R.p, [1]))
        let pPlus1 = R.bytes(R.add(R.p, [1]))
        var twoTo255Minus1 = [UInt8](repeating: 0xFF, count: 32)
        twoTo255Minus1[31] = 0x7F
        var zeroWithTopBit = [UInt8](repeating: 0, count: 32)
        zeroWithTopBit[31] = 0x80
        return [
            [UInt8](repeating: 0, count: 32),
            [1] + [UInt8](repeating: 0, count: 31),
            pMinus1, p, pPlus1, twoTo255Minus1,
            [UInt8](repeating: 0xFF, count: 32),
            zeroWithTopBit,
            [2] + [UInt8](repeating: 0, count: 31),
            [19] + [UInt8](repeating: 0, count: 31),
        ]
    }()

    /// Edge values plus seeded random encodings (some with bit 255 set).
    static func samples(random count: Int, seed: UInt64) -> [[UInt8]] {
        var generator = SplitMix64(seed: seed)
        return edgeEncodings + (0..<count).map { _ in generator.bytes(32) }
    }

    @Test("encode is canonical: p ↦ 0, p + 1 ↦ 1, 2^255 − 1 ↦ 18, bit 255 ignored")
    func canonicalEncoding() {
        for encoding in Self.samples(random: 64, seed: 1) {
            #expect(F(bytes: encoding).bytes == R.bytes(R.reduce(R.decode(encoding))), "\(encoding)")
        }
        let p = R.bytes(R.p)
        #expect(F(bytes: p).bytes == [UInt8](repeating: 0, count: 32))
        #expect(F(bytes: R.bytes(R.add(R.p, [1]))).bytes == [1] + [UInt8](repeating: 0, count: 31))
        #expect(F(bytes: Self.edgeEncodings[5]).bytes == [18] + [UInt8](repeating: 0, count: 31))
        // Canonical outputs are below p: the top byte never exceeds 0x7F and p itself never appears.
        #expect(F(bytes: R.bytes(R.subtract(R.p, [1]))).bytes == R.bytes(R.subtract(R.p, [1])))
    }

    @Test("add, sub, mul, square, negate match the reference on edge and random values")
    func ringOperations() {
        let values = Self.samples(random: 24, seed: 2)
        for a in values {
            for b in values {
                let (fa, fb) = (F(bytes: a), F(bytes: b))
                let (ra, rb) = (R.decode(a), R.decode(b))
                #expect((fa + fb).bytes == R.bytes(R.addMod(ra, rb)))
                #expect((fa - fb).bytes == R.bytes(R.subMod(ra, rb)))
                #expect((fa * fb).bytes == R.bytes(R.mulMod(ra, rb)))
            }
            let (fa, ra) = (F(bytes: a), R.decode(a))
            #expect(fa.squared.bytes == R.bytes(R.mulMod(ra, ra)))
            #expect((-fa).bytes == R.bytes(R.subMod([], ra)))
        }
    }

    @Test("long chains of operations keep limbs in range")
    func chains() {
        var generator = SplitMix64(seed: 3)
        let maximum = F(bytes: Self.edgeEncodings[5])  // 2^255 − 1, the largest decodable value
        var f = maximum
        var r = R.decode(Self.edgeEncodings[5])
        for _ in 0..<200 {
            let operand = generator.bytes(32)
            let (fo, ro) = (F(bytes: operand), R.decode(operand))
            switch generator.next() % 4 {
            case 0:
                f = f + fo + maximum
                r = R.addMod(R.addMod(r, ro), R.decode(Self.edgeEncodings[5]))
            case 1:
                f = f - fo - maximum
                r = R.subMod(R.subMod(r, ro), R.decode(Self.edgeEncodings[5]))
            case 2:
                f = (f + f + f) * (fo - maximum)
                r = R.mulMod(R.addMod(R.addMod(r, r), r), R.subMod(ro, R.decode(Self.edgeEncodings[5])))
            default:
                f = f.squared + fo
                r = R.addMod(R.mulMod(r, r), ro)
            }
            #expect(f.bytes == R.bytes(r))
        }
    }

    @Test("inverse: x · x⁻¹ = 1, matches x^(p−2), and 0⁻¹ = 0")
    func inverse() {
        for encoding in Self.samples(random: 16, seed: 4) {
            let x = F(bytes: encoding)
            let reference = R.decode(encoding)
            #expect(x.inverse.bytes == R.bytes(R.inverse(reference)))
            let isZero = R.compare(R.reduce(reference), []) == 0
            #expect((x * x.inverse).bytes == (isZero ? F.zero.bytes : F.one.bytes))
        }
    }

    @Test("Legendre symbol: matches the reference, squares give 1, 2 and Z·r² are non-squares")
    func legendre() {
        let one = F.one.bytes
        let minusOne = R.bytes(R.subtract(R.p, [1]))
        for encoding in Self.samples(random: 16, seed: 5) {
            let x = F(bytes: encoding)
            #expect(x.legendreSymbol.bytes == R.bytes(R.legendre(R.decode(encoding))))
            if x.isZero == 0 {
                #expect(x.squared.legendreSymbol.bytes == one)
                #expect((Elligator2.z * x.squared).legendreSymbol.bytes == minusOne)
            } else {
                #expect(x.legendreSymbol.bytes == F.zero.bytes)
            }
        }
        #expect(F(small: 2).legendreSymbol.bytes == minusOne, "Z = 2 is a non-square")
        #expect((-F.one).legendreSymbol.bytes == one, "−1 is a square because p ≡ 1 (mod 4)")
    }

    @Test("isZero, isEqual and select are correct for all edge values")
    func predicatesAndSelect() {
        for a in Self.edgeEncodings {
            let fa = F(bytes: a)
            let zero = R.compare(R.reduce(R.decode(a)), []) == 0
            #expect(fa.isZero == (zero ? 1 : 0))
            for b in Self.edgeEncodings {
                let fb = F(bytes: b)
                let equal = R.compare(R.reduce(R.decode(a)), R.reduce(R.decode(b))) == 0
                #expect(fa.isEqual(to: fb) == (equal ? 1 : 0))
                #expect(F.select(fa, fb, choice: 0).bytes == fa.bytes)
                #expect(F.select(fa, fb, choice: 1).bytes == fb.bytes)
            }
        }
    }

    @Test("Elligator 2 matches the RFC 9380 branching formulation and lands on the curve")
    func elligator2() {
        for encoding in Self.samples(random: 12, seed: 6) {
            let r = R.decode(encoding)
            let x = Elligator2.mapToCurve(F(bytes: encoding))
            #expect(x.bytes == R.bytes(R.elligator2(r)))
            // On Curve25519, not its twist: x³ + A·x² + x is a square (v exists). It is 0 only for r ≡ 0, which
            // maps to u = 0, the point (0, 0) of order 2 (x1 = −A, gx1 = −A is a non-square, so x = A − A = 0).
            let gx = x * (x * (x + Elligator2.curveA) + F.one)
            let rIsZero = R.compare(R.reduce(r), []) == 0
            #expect(gx.legendreSymbol.bytes == (rIsZero ? F.zero.bytes : F.one.bytes))
            #expect((x.isZero == 1) == rIsZero)
        }
    }
}
