/// An element of the prime field GF(p), p = 2^255 − 19, the coordinate field of Curve25519.
///
/// Representation: five unsigned limbs in radix 2^51, value = l0 + l1·2^51 + l2·2^102 + l3·2^153 + l4·2^204.
/// Every operation returns a *loosely reduced* element whose limbs are below 2^51 + 2^17 (so below 2^52); the
/// represented integer may then lie anywhere in [0, 2^255 + 2^17) and is only brought into the canonical range
/// [0, p) by ``bytes`` (RFC 7748 encodeUCoordinate).
///
/// Constant time: every method runs the same instruction sequence whatever the limb values are. There are no
/// branches or memory indices that depend on limb values; carries are propagated with shifts and masks, choices are
/// made with bit masks (``select(_:_:choice:)``), and exponentiation walks the bits of a *public* constant
/// exponent only. All arithmetic uses wrapping operators (`&+`, `&-`, `&*`, `&>>`) so no overflow checks are
/// emitted; the limb bounds documented on each operation guarantee that no wrap-around actually happens.
///
/// Products use `UInt128`, available in the standard library on Linux and on macOS 15 / iOS 18 and later.
struct FieldElement25519: Sendable {
    var l0: UInt64
    var l1: UInt64
    var l2: UInt64
    var l3: UInt64
    var l4: UInt64

    /// 2^51 − 1: the mask selecting one limb.
    static let mask51: UInt64 = (1 << 51) - 1

    /// The additive identity.
    static let zero = FieldElement25519(0, 0, 0, 0, 0)
    /// The multiplicative identity.
    static let one = FieldElement25519(1, 0, 0, 0, 0)

    /// Creates an element directly from limbs; callers guarantee every limb is below 2^52.
    init(_ l0: UInt64, _ l1: UInt64, _ l2: UInt64, _ l3: UInt64, _ l4: UInt64) {
        self.l0 = l0
        self.l1 = l1
        self.l2 = l2
        self.l3 = l3
        self.l4 = l4
    }

    /// Creates an element from a small public constant.
    /// - Parameter small: a value below 2^51.
    init(small: UInt64) {
        precondition(small <= Self.mask51, "constant too large for one limb")
        self.init(small, 0, 0, 0, 0)
    }

    /// Decodes 32 little-endian bytes, ignoring bit 255 (RFC 7748 decodeUCoordinate for 255-bit fields).
    ///
    /// Values in [p, 2^255) are accepted as they are: they are valid, merely non-canonical, representatives.
    /// Every byte is read exactly once at a position that depends only on the (public) offset, never on a value.
    /// - Parameter bytes: exactly 32 bytes (a precondition; the length is public), e.g. `[UInt8]` or `ArraySlice`.
    init(bytes: some RandomAccessCollection<UInt8>) {
        precondition(bytes.count == 32, "a field element is encoded in 32 bytes")
        // Four 64-bit little-endian words, assembled byte by byte (no alignment assumptions).
        func word(_ index: Int) -> UInt64 {
            var value: UInt64 = 0
            for offset in (0..<8).reversed() {
                let position = bytes.index(bytes.startIndex, offsetBy: index &* 8 &+ offset)
                value = (value &<< 8) | UInt64(bytes[position])
            }
            return value
        }
        let (w0, w1, w2, w3) = (word(0), word(1), word(2), word(3))
        let m = Self.mask51
        // Bits 0…50, 51…101, 102…152, 153…203, 204…254; bit 255 is dropped by the final mask.
        self.init(
            w0 & m,
            ((w0 &>> 51) | (w1 &<< 13)) & m,
            ((w1 &>> 38) | (w2 &<< 26)) & m,
            ((w2 &>> 25) | (w3 &<< 39)) & m,
            (w3 &>> 12) & m
        )
    }

    // MARK: - Carries and reduction

    /// Propagates carries once around the limbs of an element whose limbs are below 2^63.
    ///
    /// Uses 2^255 ≡ 19 (mod p): the carry out of the top limb re-enters the bottom limb multiplied by 19.
    /// Result: limbs 1…4 below 2^51 + 2^12, limb 0 below 2^51 + 19·2^12.
    private static func carried(
        _ a0: UInt64, _ a1: UInt64, _ a2: UInt64, _ a3: UInt64, _ a4: UInt64
    ) -> FieldElement25519 {
        let m = mask51
        var (h0, h1, h2, h3, h4) = (a0, a1, a2, a3, a4)
        h1 = h1 &+ (h0 &>> 51)
        h0 &= m
        h2 = h2 &+ (h1 &>> 51)
        h1 &= m
        h3 = h3 &+ (h2 &>> 51)
        h2 &= m
        h4 = h4 &+ (h3 &>> 51)
        h3 &= m
        h0 = h0 &+ 19 &* (h4 &>> 51)
        h4 &= m
        return FieldElement25519(h0, h1, h2, h3, h4)
    }

    /// The canonical representative in [0, p), with all limbs below 2^51.
    ///
    /// After two carry passes the value h is below 2^255 + 2^10 < 2p, so h mod p is h − q·p with q ∈ {0, 1} and
    /// q = ⌊(h + 19) / 2^255⌋. q is computed with a carry chain (no comparison, no branch); then 19·q is added and
    /// bit 255 is dropped, which subtracts q·(2^255 − 19) = q·p.
    var reduced: FieldElement25519 {
        let h = Self.carried(l0, l1, l2, l3, l4)
        let g = Self.carried(h.l0, h.l1, h.l2, h.l3, h.l4)
        var q = (g.l0 &+ 19) &>> 51
        q = (g.l1 &+ q) &>> 51
        q = (g.l2 &+ q) &>> 51
        q = (g.l3 &+ q) &>> 51
        q = (g.l4 &+ q) &>> 51
        let m = Self.mask51
        var (h0, h1, h2, h3, h4) = (g.l0 &+ 19 &* q, g.l1, g.l2, g.l3, g.l4)
        h1 = h1 &+ (h0 &>> 51)
        h0 &= m
        h2 = h2 &+ (h1 &>> 51)
        h1 &= m
        h3 = h3 &+ (h2 &>> 51)
        h2 &= m
        h4 = h4 &+ (h3 &>> 51)
        h3 &= m
        h4 &= m  // drops 2^255·q
        return FieldElement25519(h0, h1, h2, h3, h4)
    }

    /// The canonical 32-byte little-endian encoding (RFC 7748 encodeUCoordinate), fully reduced mod p.
    var bytes: [UInt8] {
        let r = reduced
        let words: [UInt64] = [
            r.l0 | (r.l1 &<< 51),
            (r.l1 &>> 13) | (r.l2 &<< 38),
            (r.l2 &>> 26) | (r.l3 &<< 25),
            (r.l3 &>> 39) | (r.l4 &<< 12),
        ]
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for word in words {
            for shift in stride(from: 0, to: 64, by: 8) {
                out.append(UInt8(truncatingIfNeeded: word &>> UInt64(shift)))
            }
        }
        return out
    }

    // MARK: - Ring operations

    /// The sum. Inputs below 2^52 per limb give limb sums below 2^53, well inside one carry pass.
    static func + (a: FieldElement25519, b: FieldElement25519) -> FieldElement25519 {
        carried(a.l0 &+ b.l0, a.l1 &+ b.l1, a.l2 &+ b.l2, a.l3 &+ b.l3, a.l4 &+ b.l4)
    }

    /// The difference, computed as a + 4p − b limb by limb so no limb goes negative.
    ///
    /// 4p has limbs 2^53 − 76 and 2^53 − 4, each larger than any loosely reduced limb of b (< 2^52).
    static func - (a: FieldElement25519, b: FieldElement25519) -> FieldElement25519 {
        let fourP0: UInt64 = (1 << 53) - 76
        let fourPi: UInt64 = (1 << 53) - 4
        return carried(
            a.l0 &+ fourP0 &- b.l0,
            a.l1 &+ fourPi &- b.l1,
            a.l2 &+ fourPi &- b.l2,
            a.l3 &+ fourPi &- b.l3,
            a.l4 &+ fourPi &- b.l4
        )
    }

    /// The additive inverse, 0 − a.
    static prefix func - (a: FieldElement25519) -> FieldElement25519 {
        zero - a
    }

    /// The product.
    ///
    /// Schoolbook multiplication of the limbs; partial products of weight 2^(51·k) with k ≥ 5 are folded back
    /// using 2^255 ≡ 19, i.e. multiplied by 19. With limbs below 2^52, 19·b_j < 2^57, each partial product is
    /// below 2^109 and each column of five sums below 2^112, comfortably inside `UInt128`.
    static func * (a: FieldElement25519, b: FieldElement25519) -> FieldElement25519 {
        @inline(__always) func wide(_ x: UInt64, _ y: UInt64) -> UInt128 {
            UInt128(x) &* UInt128(y)
        }
        let (a0, a1, a2, a3, a4) = (a.l0, a.l1, a.l2, a.l3, a.l4)
        let (b0, b1, b2, b3, b4) = (b.l0, b.l1, b.l2, b.l3, b.l4)
        let (b1x19, b2x19, b3x19, b4x19) = (b1 &* 19, b2 &* 19, b3 &* 19, b4 &* 19)

        var r0 = wide(a0, b0) &+ wide(a1, b4x19) &+ wide(a2, b3x19) &+ wide(a3, b2x19) &+ wide(a4, b1x19)
        var r1 = wide(a0, b1) &+ wide(a1, b0) &+ wide(a2, b4x19) &+ wide(a3, b3x19) &+ wide(a4, b2x19)
        var r2 = wide(a0, b2) &+ wide(a1, b1) &+ wide(a2, b0) &+ wide(a3, b4x19) &+ wide(a4, b3x19)
        var r3 = wide(a0, b3) &+ wide(a1, b2) &+ wide(a2, b1) &+ wide(a3, b0) &+ wide(a4, b4x19)
        var r4 = wide(a0, b4) &+ wide(a1, b3) &+ wide(a2, b2) &+ wide(a3, b1) &+ wide(a4, b0)

        // Carry chain in 128 bits; the final carry (< 2^62) times 19 still fits, then one more step into limb 1.
        let m = UInt128(mask51)
        r1 = r1 &+ (r0 &>> 51)
        r0 &= m
        r2 = r2 &+ (r1 &>> 51)
        r1 &= m
        r3 = r3 &+ (r2 &>> 51)
        r2 &= m
        r4 = r4 &+ (r3 &>> 51)
        r3 &= m
        r0 = r0 &+ 19 &* (r4 &>> 51)
        r4 &= m
        r1 = r1 &+ (r0 &>> 51)
        r0 &= m
        return FieldElement25519(
            UInt64(truncatingIfNeeded: r0),
            UInt64(truncatingIfNeeded: r1),
            UInt64(truncatingIfNeeded: r2),
            UInt64(truncatingIfNeeded: r3),
            UInt64(truncatingIfNeeded: r4)
        )
    }

    /// The square, self · self.
    var squared: FieldElement25519 {
        self * self
    }

    // MARK: - Exponentiation

    /// self^e for a public exponent e given as 32 little-endian bytes.
    ///
    /// Left-to-right square-and-multiply. The branch depends only on the bits of the exponent, which is a public
    /// constant (p − 2 or (p − 1)/2 here), never on the secret base, so the sequence of operations is fixed.
    /// - Parameter exponent: the exponent, 32 bytes little endian; it must not be secret.
    /// - Returns: self raised to the exponent (0^e = 0 for e > 0).
    func power(publicExponent exponent: [UInt8]) -> FieldElement25519 {
        var result = FieldElement25519.one
        for bit in (0..<(exponent.count * 8)).reversed() {
            result = result.squared
            if (exponent[bit / 8] >> UInt8(bit % 8)) & 1 == 1 {
                result = result * self
            }
        }
        return result
    }

    /// p − 2 = 2^255 − 21, little endian.
    static let pMinus2: [UInt8] = [0xEB] + [UInt8](repeating: 0xFF, count: 30) + [0x7F]
    /// (p − 1) / 2 = 2^254 − 10, little endian.
    static let pMinus1Over2: [UInt8] = [0xF6] + [UInt8](repeating: 0xFF, count: 30) + [0x3F]

    /// The multiplicative inverse by Fermat's little theorem, self^(p−2); maps 0 to 0 (the RFC 9380 `inv0`).
    var inverse: FieldElement25519 {
        power(publicExponent: Self.pMinus2)
    }

    /// Euler's criterion, self^((p−1)/2): 1 for a non-zero square, p − 1 (that is −1) for a non-square, 0 for 0.
    /// This is the "epsilon" of the CPace draft's Elligator 2 reference code.
    var legendreSymbol: FieldElement25519 {
        power(publicExponent: Self.pMinus1Over2)
    }

    // MARK: - Constant-time predicates and selection

    /// 1 if the element is ≡ 0 (mod p), else 0, computed without branching on the value.
    var isZero: UInt64 {
        var accumulator: UInt64 = 0
        for byte in bytes {
            accumulator |= UInt64(byte)
        }
        // For 0 ≤ accumulator < 2^63: (accumulator | −accumulator) has its top bit set exactly when it is non-zero.
        return ((accumulator | (0 &- accumulator)) &>> 63) ^ 1
    }

    /// 1 if the two elements are congruent mod p, else 0, computed without branching on the values.
    /// - Parameter other: the element to compare with.
    /// - Returns: 1 when equal, 0 otherwise.
    func isEqual(to other: FieldElement25519) -> UInt64 {
        (self - other).isZero
    }

    /// Branch-free choice: `a` when `choice` is 0, `b` when `choice` is 1.
    ///
    /// The choice bit becomes an all-zeros or all-ones mask; both inputs are always read and combined.
    /// - Parameters:
    ///   - a: the element returned for choice 0.
    ///   - b: the element returned for choice 1.
    ///   - choice: 0 or 1.
    /// - Returns: `a` or `b`.
    static func select(_ a: FieldElement25519, _ b: FieldElement25519, choice: UInt64) -> FieldElement25519 {
        let mask = 0 &- (choice & 1)
        return FieldElement25519(
            a.l0 ^ (mask & (a.l0 ^ b.l0)),
            a.l1 ^ (mask & (a.l1 ^ b.l1)),
            a.l2 ^ (mask & (a.l2 ^ b.l2)),
            a.l3 ^ (mask & (a.l3 ^ b.l3)),
            a.l4 ^ (mask & (a.l4 ^ b.l4))
        )
    }
}
