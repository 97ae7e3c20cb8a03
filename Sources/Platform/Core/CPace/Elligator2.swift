/// The Elligator 2 map onto Curve25519 (RFC 9380 section 6.7.1, as restated in draft-irtf-cfrg-cpace-21 A.5).
///
/// Curve25519 in Montgomery form is v² = u³ + A·u² + u with A = 486662 over GF(2^255 − 19). The map takes any field
/// element r to the u-coordinate of a point on the curve (never on the twist):
///
///     x1  = −A / (1 + Z·r²)                      with the non-square Z = 2
///     gx1 = x1³ + A·x1² + x1
///     ε   = gx1^((p−1)/2)                         Euler's criterion: 1 if gx1 is a square, −1 otherwise
///     x   = ε·x1 − (1 − ε)·A/2                    i.e. x1 if gx1 is square, −x1 − A if not
///
/// When gx1 is not a square, gx2 = gx(−x1 − A) = Z·r²·gx1 is, because Z·r² is a non-square times a square.
///
/// Constant time: the formula for x is evaluated arithmetically from ε, exactly as in the draft's reference code,
/// so the square/non-square decision (which depends on the password) never becomes a branch or an index. The
/// exponentiations use public exponents only (see ``FieldElement25519/power(publicExponent:)``).
enum Elligator2 {
    /// The Montgomery coefficient A of Curve25519.
    static let curveA = FieldElement25519(small: 486_662)
    /// A / 2, an integer because A is even.
    static let halfCurveA = FieldElement25519(small: 243_331)
    /// The non-square Z = 2 (find_z_ell2 for GF(2^255 − 19): 2 is a non-square because p ≡ 5 mod 8).
    static let z = FieldElement25519(small: 2)

    /// Maps a field element to the u-coordinate of a point on Curve25519.
    ///
    /// The exceptional case 1 + Z·r² = 0 of RFC 9380 (where x1 is defined as −A) cannot occur for Curve25519:
    /// it needs r² = −1/2, and −1/2 is a non-square (−1 is a square since p ≡ 1 mod 4, 2 is not). It is handled
    /// anyway, with a branch-free ``FieldElement25519/select(_:_:choice:)``, so the map is total.
    ///
    /// - Parameter r: the field element; it may be non-canonical.
    /// - Returns: the u-coordinate x, loosely reduced (encode it with ``FieldElement25519/bytes``).
    static func mapToCurve(_ r: FieldElement25519) -> FieldElement25519 {
        let denominator = FieldElement25519.one + z * r.squared
        // inverse is inv0: 0 ↦ 0, so x1 is computed (as 0) even in the exceptional case and then replaced.
        let x1Regular = -curveA * denominator.inverse
        let x1 = FieldElement25519.select(x1Regular, -curveA, choice: denominator.isZero)

        // gx1 = x1³ + A·x1² + x1 = x1·(x1·(x1 + A) + 1), Horner form.
        let gx1 = x1 * (x1 * (x1 + curveA) + .one)
        let epsilon = gx1.legendreSymbol

        // ε = 1 gives x1; ε = −1 gives −x1 − 2·A/2 = −x1 − A. (ε = 0 would need gx1 = 0, impossible: x1 ≠ 0 and
        // x² + A·x + 1 has no root in GF(p) because A² − 4 is a non-square for Curve25519.)
        return epsilon * x1 - (FieldElement25519.one - epsilon) * halfCurveA
    }
}
