/// A secret yes/no held as a mask of all ones (true) or all zeros (false), so it can steer a
/// `FieldElement.select` with bitwise arithmetic instead of a branch whose timing would tell.
struct ConstantTimeBool: Sendable {
    /// `UInt64.max` for true, 0 for false — never anything else.
    let mask: UInt64

    /// True when `word` is 0, worked out without comparing `word` to anything.
    init(isZero word: UInt64) {
        // `word | -word` has its top bit set exactly when word ≠ 0.
        let nonZeroBit = (word | (0 &- word)) >> 63
        mask = nonZeroBit &- 1
    }

    private init(mask: UInt64) { self.mask = mask }

    static prefix func ! (value: ConstantTimeBool) -> ConstantTimeBool { ConstantTimeBool(mask: ~value.mask) }

    /// The answer as a `Bool`: only for values that may become public (tests, or a result that
    /// is about to be sent anyway), since branching on it is exactly what the mask avoids.
    var revealed: Bool { mask != 0 }
}

/// An element of GF(p), p = 2^255 - 19, the field under Curve25519, in constant time.
///
/// Five 51-bit limbs in `UInt64` (value = Σ limb[i] · 2^(51·i)): a limb product fits 128 bits via
/// `multipliedFullWidth`, and 2^255 ≡ 19 folds the high part of a product back into the low limbs.
/// Every operation does the same instructions whatever the value: no branch and no memory index
/// depends on the limbs, exponents are fixed addition chains, and choices go through masks
/// (`select`, `ConstantTimeBool`). Limbs are kept only loosely reduced (each at most 2^51) between
/// operations; `canonicalBytes` does the final reduction to [0, p).
///
/// Wrapping operators (`&+`, `&*`) are used on purpose: the limb bounds noted at each step keep
/// every sum inside 64 bits, and a trapping `+` would add a check on secret data for nothing.
struct FieldElement: Sendable {
    private var l0, l1, l2, l3, l4: UInt64

    private static let limbMask: UInt64 = (1 << 51) - 1

    private init(_ l0: UInt64, _ l1: UInt64, _ l2: UInt64, _ l3: UInt64, _ l4: UInt64) {
        (self.l0, self.l1, self.l2, self.l3, self.l4) = (l0, l1, l2, l3, l4)
    }

    /// A small constant.
    init(_ value: UInt32) { self.init(UInt64(value), 0, 0, 0, 0) }

    static let zero = FieldElement(0)
    static let one = FieldElement(1)

    /// The 32 little-endian bytes as a 256-bit number, reduced mod p. No bit is dropped: bit 255
    /// counts as 2^255 ≡ 19 (unlike RFC 7748's u-coordinate decoding, which masks it off), so any
    /// 32 bytes map to the same element as the big-integer value mod p.
    init(reducingLittleEndian bytes: some Collection<UInt8>) {
        precondition(bytes.count == 32, "a field element is read from 32 bytes")  // public length
        var words = [UInt64](repeating: 0, count: 4)
        for (index, byte) in bytes.enumerated() { words[index / 8] |= UInt64(byte) << (8 * UInt64(index % 8)) }
        let mask = Self.limbMask
        self.init(
            words[0] & mask,
            (words[0] >> 51 | words[1] << 13) & mask,
            (words[1] >> 38 | words[2] << 26) & mask,
            (words[2] >> 25 | words[3] << 39) & mask,
            (words[3] >> 12) & mask)
        l0 = l0 &+ 19 &* (words[3] >> 63)  // bit 255: 2^255 ≡ 19
        reduceWeakly()
    }

    /// A 512-bit big-endian number (such as a SHA-512 digest read as one integer) reduced mod p:
    /// high · 2^256 + low with 2^256 ≡ 38.
    init(reducingWideBigEndian bytes: [UInt8]) {
        precondition(bytes.count == 64, "a wide reduction takes 64 bytes")  // public length
        let littleEndian = Array(bytes.reversed())
        let low = FieldElement(reducingLittleEndian: littleEndian[0..<32])
        let high = FieldElement(reducingLittleEndian: littleEndian[32..<64])
        self = low + high * FieldElement(38)
    }

    /// The unique representative in [0, p) as 32 little-endian bytes (bit 255 always clear).
    var canonicalBytes: [UInt8] {
        let r = canonicalized()
        let words = [
            r.l0 | r.l1 << 51,
            r.l1 >> 13 | r.l2 << 38,
            r.l2 >> 26 | r.l3 << 25,
            r.l3 >> 39 | r.l4 << 12,
        ]
        var bytes = [UInt8](repeating: 0, count: 32)
        for index in 0..<32 { bytes[index] = UInt8(truncatingIfNeeded: words[index / 8] >> (8 * UInt64(index % 8))) }
        return bytes
    }

    // MARK: - Arithmetic

    static func + (a: FieldElement, b: FieldElement) -> FieldElement {
        // Limbs ≤ 2^51 each, so sums ≤ 2^52: far from overflow before the carry pass.
        var r = FieldElement(a.l0 &+ b.l0, a.l1 &+ b.l1, a.l2 &+ b.l2, a.l3 &+ b.l3, a.l4 &+ b.l4)
        r.reduceWeakly()
        return r
    }

    static func - (a: FieldElement, b: FieldElement) -> FieldElement {
        // Add 4p, limb by limb, first so no limb goes negative: each limb of 4p (≥ 2^53 - 76)
        // exceeds any loosely reduced limb of b (≤ 2^51).
        let fourP0: UInt64 = 4 * ((1 << 51) - 19), fourPn: UInt64 = 4 * ((1 << 51) - 1)
        var r = FieldElement(
            a.l0 &+ fourP0 &- b.l0, a.l1 &+ fourPn &- b.l1, a.l2 &+ fourPn &- b.l2,
            a.l3 &+ fourPn &- b.l3, a.l4 &+ fourPn &- b.l4)
        r.reduceWeakly()
        return r
    }

    static prefix func - (a: FieldElement) -> FieldElement { .zero - a }

    static func * (a: FieldElement, b: FieldElement) -> FieldElement {
        // Schoolbook product; a term landing at 2^(255 + k) is folded to 19 · 2^k, so b's limbs
        // are premultiplied by 19 where they wrap.
        let b1x19 = b.l1 &* 19, b2x19 = b.l2 &* 19, b3x19 = b.l3 &* 19, b4x19 = b.l4 &* 19
        var t0 = WideWord(a.l0, b.l0), t1 = WideWord(a.l0, b.l1), t2 = WideWord(a.l0, b.l2)
        var t3 = WideWord(a.l0, b.l3), t4 = WideWord(a.l0, b.l4)
        t0.add(a.l1, b4x19); t0.add(a.l2, b3x19); t0.add(a.l3, b2x19); t0.add(a.l4, b1x19)
        t1.add(a.l1, b.l0); t1.add(a.l2, b4x19); t1.add(a.l3, b3x19); t1.add(a.l4, b2x19)
        t2.add(a.l1, b.l1); t2.add(a.l2, b.l0); t2.add(a.l3, b4x19); t2.add(a.l4, b3x19)
        t3.add(a.l1, b.l2); t3.add(a.l2, b.l1); t3.add(a.l3, b.l0); t3.add(a.l4, b4x19)
        t4.add(a.l1, b.l3); t4.add(a.l2, b.l2); t4.add(a.l3, b.l1); t4.add(a.l4, b.l0)

        // Carry 51 bits at a time. Limbs are at most 2^51 after a weak reduction, so t0…t3 are
        // below 77 · 2^102 < 2^109 (carries < 2^58) and t4, with no folded term, below 2^105
        // (top carry < 2^54): 19 · top carry still fits a limb, and the weak reduction settles it.
        let mask = limbMask
        let r0 = t0.low & mask
        t1.add(t0.shiftedRight51)
        let r1 = t1.low & mask
        t2.add(t1.shiftedRight51)
        let r2 = t2.low & mask
        t3.add(t2.shiftedRight51)
        let r3 = t3.low & mask
        t4.add(t3.shiftedRight51)
        let r4 = t4.low & mask
        let topCarry = t4.shiftedRight51
        var r = FieldElement(r0 &+ topCarry &* 19, r1, r2, r3, r4)
        r.reduceWeakly()
        return r
    }

    var squared: FieldElement { self * self }

    /// self^(2^count): `count` squarings in a row (count is a public constant of a chain).
    private func squared(times count: Int) -> FieldElement {
        var r = self
        for _ in 0..<count { r = r.squared }
        return r
    }

    /// (self^(2^250 - 1), self^11): the shared start of the fixed chains for p - 2 and (p - 1)/2,
    /// the usual Curve25519 addition chain (11 multiplications, 250 squarings).
    private func chainTo2p250minus1() -> (power: FieldElement, eleventh: FieldElement) {
        let z2 = squared                                   // 2
        let z9 = self * z2.squared(times: 2)               // 9
        let z11 = z9 * z2                                  // 11
        let z2p5m1 = z9 * z11.squared                      // 2^5 - 1 = 31
        let z2p10m1 = z2p5m1.squared(times: 5) * z2p5m1    // 2^10 - 1
        let z2p20m1 = z2p10m1.squared(times: 10) * z2p10m1
        let z2p40m1 = z2p20m1.squared(times: 20) * z2p20m1
        let z2p50m1 = z2p40m1.squared(times: 10) * z2p10m1
        let z2p100m1 = z2p50m1.squared(times: 50) * z2p50m1
        let z2p200m1 = z2p100m1.squared(times: 100) * z2p100m1
        let z2p250m1 = z2p200m1.squared(times: 50) * z2p50m1
        return (z2p250m1, z11)
    }

    /// 1/self by Fermat, self^(p-2) = self^(2^255 - 21); 0 maps to 0 (RFC 9380's inv0).
    var inverted: FieldElement {
        let (z2p250m1, z11) = chainTo2p250minus1()
        return z2p250m1.squared(times: 5) * z11            // 2^255 - 32 + 11
    }

    /// Euler's criterion, self^((p-1)/2) = self^(2^254 - 10): 1 for a non-zero square, p - 1 for a
    /// non-square, 0 for 0.
    var legendreSymbol: FieldElement {
        let (z2p250m1, _) = chainTo2p250minus1()
        let z2p252m3 = z2p250m1.squared(times: 2) * self   // 2^252 - 3
        return z2p252m3.squared(times: 2) * squared        // 2^254 - 12 + 2
    }

    /// Whether self has a square root in the field (0 counts, as in RFC 9380's is_square).
    var isSquare: ConstantTimeBool { !legendreSymbol.equals(-FieldElement.one) }

    // MARK: - Constant-time comparison and choice

    var isZero: ConstantTimeBool {
        let r = canonicalized()
        return ConstantTimeBool(isZero: r.l0 | r.l1 | r.l2 | r.l3 | r.l4)
    }

    /// Equality mod p as a mask (not `==`, which would promise a `Bool`).
    func equals(_ other: FieldElement) -> ConstantTimeBool { (self - other).isZero }

    /// `whenTrue` if `condition`, else `whenFalse`, by masking every limb of both.
    static func select(_ condition: ConstantTimeBool, _ whenTrue: FieldElement, else whenFalse: FieldElement) -> FieldElement {
        func pick(_ t: UInt64, _ f: UInt64) -> UInt64 { f ^ (condition.mask & (t ^ f)) }
        return FieldElement(
            pick(whenTrue.l0, whenFalse.l0), pick(whenTrue.l1, whenFalse.l1), pick(whenTrue.l2, whenFalse.l2),
            pick(whenTrue.l3, whenFalse.l3), pick(whenTrue.l4, whenFalse.l4))
    }

    /// Exchanges a and b if `condition`, leaving both unchanged otherwise, with the same work.
    static func swap(_ condition: ConstantTimeBool, _ a: inout FieldElement, _ b: inout FieldElement) {
        let (newA, newB) = (select(condition, b, else: a), select(condition, a, else: b))
        (a, b) = (newA, newB)
    }

    // MARK: - Reduction

    /// One carry pass: every limb ends at most 2^51 (below 2^51 but for l1, which may take one
    /// last carry), the value unchanged mod p but not necessarily below p. Accepts limbs below 2^63.
    private mutating func reduceWeakly() {
        let mask = Self.limbMask
        l1 = l1 &+ (l0 >> 51); l0 &= mask
        l2 = l2 &+ (l1 >> 51); l1 &= mask
        l3 = l3 &+ (l2 >> 51); l2 &= mask
        l4 = l4 &+ (l3 >> 51); l3 &= mask
        l0 = l0 &+ (l4 >> 51) &* 19; l4 &= mask  // carry < 2^13, so 19 · carry < 2^18
        l1 = l1 &+ (l0 >> 51); l0 &= mask
    }

    /// The same value with limbs that spell the representative in [0, p).
    ///
    /// After a weak reduction the value v is below 2p, so v ≥ p exactly when v + 19 carries into
    /// bit 255; that carry q (0 or 1) is found by running the carries of v + 19, then v + 19q is
    /// computed and bit 255 dropped, which subtracts p when q = 1.
    private func canonicalized() -> FieldElement {
        var r = self
        r.reduceWeakly()
        var q = (r.l0 &+ 19) >> 51
        q = (r.l1 &+ q) >> 51
        q = (r.l2 &+ q) >> 51
        q = (r.l3 &+ q) >> 51
        q = (r.l4 &+ q) >> 51
        let mask = Self.limbMask
        r.l0 = r.l0 &+ 19 &* q
        r.l1 = r.l1 &+ (r.l0 >> 51); r.l0 &= mask
        r.l2 = r.l2 &+ (r.l1 >> 51); r.l1 &= mask
        r.l3 = r.l3 &+ (r.l2 >> 51); r.l2 &= mask
        r.l4 = r.l4 &+ (r.l3 >> 51); r.l3 &= mask
        r.l4 &= mask  // drops 2^255, which with the 19 added is p
        return r
    }
}

/// A 128-bit accumulator for sums of 64×64-bit limb products, without `UInt128` (which would need
/// macOS 15, above this package's floor). Additions use add-with-carry, which costs the same for
/// every value.
private struct WideWord {
    var low: UInt64
    var high: UInt64

    init(_ a: UInt64, _ b: UInt64) { (high, low) = a.multipliedFullWidth(by: b) }

    mutating func add(_ a: UInt64, _ b: UInt64) {
        let (productHigh, productLow) = a.multipliedFullWidth(by: b)
        let (sum, carry) = low.addingReportingOverflow(productLow)
        low = sum
        high = high &+ productHigh &+ (carry ? 1 : 0)
    }

    mutating func add(_ value: UInt64) {
        let (sum, carry) = low.addingReportingOverflow(value)
        low = sum
        high = high &+ (carry ? 1 : 0)
    }

    /// The value divided by 2^51, assumed below 2^115 so it fits 64 bits.
    var shiftedRight51: UInt64 { low >> 51 | high << 13 }
}
