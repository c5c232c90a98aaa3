import BigInt
import Foundation
import Testing
@testable import P2P

/// GF(2^255 - 19) arithmetic and the Elligator 2 map, checked against known values and against an
/// independent big-integer reference (the variable-time `BigUInt` code `CPace` used before), which
/// is why `BigInt` stays a dependency of the test target only.
@Suite("Field element")
struct FieldElementTests {
    /// `count` rounds of a big-integer cross-check, a tenth of them under ThreadSanitizer: they share no
    /// state, so TSan has nothing to find in them, and at full count the elligator check alone held a core
    /// for 18 s while connection tests beside it ran out their 10 s timeouts (a CI run went red). The
    /// long checks run `offThePool`: on a pool thread they held up every other test's task.
    static func rounds(_ count: Int) -> Int { ThreadSanitizer.isActive ? max(1, count / 10) : count }
    // MARK: - Known values

    @Test func valuesFromPUpwardReduceToTheirRemainder() {
        // p, p + 1, …, 2^255 - 1 are 0, 1, …, 18; 2^255 is 19 and 2^256 - 1 is 2^256 - 1 - 2p = 37.
        for offset in 0..<19 {
            let value = Reference.p + BigUInt(offset)
            let element = FieldElement(reducingLittleEndian: Reference.littleEndian(value))
            #expect(element.canonicalBytes == Reference.littleEndian(BigUInt(offset)), "p + \(offset)")
            #expect(element.equals(FieldElement(UInt32(offset))).revealed)
        }
        #expect(FieldElement(reducingLittleEndian: Reference.littleEndian(Reference.p)).isZero.revealed)
        #expect(FieldElement(reducingLittleEndian: Reference.littleEndian(BigUInt(1) << 255)).canonicalBytes == Reference.littleEndian(19))
        #expect(FieldElement(reducingLittleEndian: [UInt8](repeating: 0xFF, count: 32)).canonicalBytes == Reference.littleEndian(37))
        let p = Reference.p
        #expect(FieldElement(reducingLittleEndian: Reference.littleEndian(p - 1)).canonicalBytes == Reference.littleEndian(p - 1))
        #expect((FieldElement.zero - .one).canonicalBytes == Reference.littleEndian(p - 1))
        #expect(FieldElement(reducingWideBigEndian: [UInt8](repeating: 0xFF, count: 64)).canonicalBytes
            == Reference.littleEndian(((BigUInt(1) << 512) - 1) % p))
    }

    @Test func canonicalBytesNeverSetBit255() {
        var random = SplitMix64()
        for _ in 0..<200 {
            #expect(random.element().canonicalBytes[31] & 0x80 == 0)
        }
    }

    @Test func inverseTimesValueIsOne() async {
        await offThePool {
            var random = SplitMix64()
            #expect(FieldElement.zero.inverted.isZero.revealed, "inv0(0) = 0")
            #expect(FieldElement.one.inverted.equals(.one).revealed)
            for _ in 0..<1000 {
                let x = random.element()
                guard !x.isZero.revealed else { continue }
                #expect((x * x.inverted).equals(.one).revealed)
            }
        }
    }

    @Test func squaresAreSquaresAndTwiceASquareIsNot() async {
        await offThePool {
            var random = SplitMix64()
            // p ≡ 5 (mod 8): 2 is not a square, -1 is.
            #expect(!FieldElement(2).isSquare.revealed)
            #expect((-FieldElement.one).isSquare.revealed)
            #expect(FieldElement.zero.isSquare.revealed)
            #expect(FieldElement.zero.legendreSymbol.isZero.revealed)
            for _ in 0..<300 {
                let x = random.element()
                guard !x.isZero.revealed else { continue }
                #expect(x.squared.isSquare.revealed)
                #expect(x.squared.legendreSymbol.equals(.one).revealed)
                #expect(!(FieldElement(2) * x.squared).isSquare.revealed)
                #expect((FieldElement(2) * x.squared).legendreSymbol.equals(-FieldElement.one).revealed)
            }
        }
    }

    @Test func selectAndSwapFollowTheMask() {
        let (a, b) = (FieldElement(7), FieldElement(11))
        #expect(FieldElement.select(ConstantTimeBool(isZero: 0), a, else: b).equals(a).revealed)
        #expect(FieldElement.select(ConstantTimeBool(isZero: 5), a, else: b).equals(b).revealed)
        var (x, y) = (a, b)
        FieldElement.swap(ConstantTimeBool(isZero: 1), &x, &y)
        #expect(x.equals(a).revealed && y.equals(b).revealed)
        FieldElement.swap(ConstantTimeBool(isZero: 0), &x, &y)
        #expect(x.equals(b).revealed && y.equals(a).revealed)
        for word: UInt64 in [0, 1, 1 << 63, .max, 0x8000_0000] {
            let zero = ConstantTimeBool(isZero: word)
            #expect(zero.mask == (word == 0 ? .max : 0))
            #expect((!zero).revealed == (word != 0))
        }
    }

    // MARK: - Against the big-integer reference

    @Test func arithmeticMatchesBigIntegers() async {
        await offThePool {
            var random = SplitMix64()
            let p = Reference.p
            for _ in 0..<Self.rounds(1000) {
                let (aBytes, bBytes) = (random.bytes(32), random.bytes(32))
                let (a, b) = (FieldElement(reducingLittleEndian: aBytes), FieldElement(reducingLittleEndian: bBytes))
                let (bigA, bigB) = (Reference.value(littleEndian: aBytes) % p, Reference.value(littleEndian: bBytes) % p)
                #expect(a.canonicalBytes == Reference.littleEndian(bigA))
                #expect((a + b).canonicalBytes == Reference.littleEndian((bigA + bigB) % p))
                #expect((a - b).canonicalBytes == Reference.littleEndian((bigA + p - bigB) % p))
                #expect((a * b).canonicalBytes == Reference.littleEndian(bigA * bigB % p))
                #expect(a.squared.canonicalBytes == Reference.littleEndian(bigA * bigA % p))
                #expect((-a).canonicalBytes == Reference.littleEndian((p - bigA) % p))
                #expect(a.equals(b).revealed == (bigA == bigB))
            }
            for _ in 0..<50 {
                let a = random.element()
                #expect(a.inverted.canonicalBytes == Reference.littleEndian(Reference.inverse(Reference.value(a))))
            }
        }
    }

    /// Long chains keep limbs near their loosest bounds (results of `-` fed into `*` and so on), which
    /// one operation on fresh input would not reach.
    @Test func chainedOperationsStayExact() async {
        await offThePool {
            var random = SplitMix64()
            let p = Reference.p
            var x = FieldElement.zero - .one, bigX = p - 1
            for _ in 0..<Self.rounds(2000) {
                let yBytes = random.bytes(32)
                let y = FieldElement(reducingLittleEndian: yBytes), bigY = Reference.value(littleEndian: yBytes) % p
                x = (x * x - y) * (y - x) + x
                bigX = ((bigX * bigX + p - bigY) % p * ((bigY + p - bigX) % p) + bigX) % p
            }
            #expect(x.canonicalBytes == Reference.littleEndian(bigX))
        }
    }

    @Test func wideReductionMatchesBigIntegers() async {
        await offThePool {
            var random = SplitMix64()
            for _ in 0..<Self.rounds(1000) {
                let digest = random.bytes(64)
                #expect(FieldElement(reducingWideBigEndian: digest).canonicalBytes
                    == Reference.littleEndian(BigUInt(Data(digest)) % Reference.p))
            }
        }
    }

    @Test func elligatorMatchesTheBigIntegerMap() async {
        await offThePool {
            var random = SplitMix64()
            // 100 inputs: the big-integer reference takes ~50 ms a map in a debug build, and a test that
            // hogs a core for a minute starves the network tests running beside it.
            var inputs: [[UInt8]] = (0..<Self.rounds(100)).map { _ in random.bytes(64) }
            // Edge values too: 0, 1, p - 1, p, 2^512 - 1 as 64-byte big-endian integers.
            for value in [BigUInt(0), 1, Reference.p - 1, Reference.p, (BigUInt(1) << 512) - 1] {
                inputs.append(Array(Reference.littleEndian(value, count: 64).reversed()))
            }
            for digest in inputs {
                let expected = Reference.littleEndian(Reference.elligator2(BigUInt(Data(digest)) % Reference.p))
                #expect(CPace.elligator2(FieldElement(reducingWideBigEndian: digest)).canonicalBytes == expected)
            }
        }
    }

}

/// The big-integer arithmetic `CPace` used before `FieldElement`: variable time, but short and
/// obviously right, so it serves as the reference.
private enum Reference {
    static let p = (BigUInt(1) << 255) - 19
    static let montgomeryA = BigUInt(486662)

    static func elligator2(_ r: BigUInt) -> BigUInt {
        let denominator = (1 + 2 * r.power(2, modulus: p)) % p
        var x1 = denominator == 0 ? p - montgomeryA : (p - montgomeryA) * inverse(denominator) % p
        if x1 == 0 { x1 = p - montgomeryA }
        if isSquare(curve(x1)) { return x1 }
        return (2 * p - x1 - montgomeryA) % p
    }

    static func curve(_ u: BigUInt) -> BigUInt {
        (u.power(3, modulus: p) + montgomeryA * u.power(2, modulus: p) + u) % p
    }

    static func isSquare(_ value: BigUInt) -> Bool {
        let legendre = value.power((p - 1) / 2, modulus: p)
        return legendre == 0 || legendre == 1
    }

    static func inverse(_ value: BigUInt) -> BigUInt { value.power(p - 2, modulus: p) }

    static func value(littleEndian bytes: [UInt8]) -> BigUInt { BigUInt(Data(bytes.reversed())) }
    static func value(_ element: FieldElement) -> BigUInt { value(littleEndian: element.canonicalBytes) }

    static func littleEndian(_ value: BigUInt, count: Int = 32) -> [UInt8] {
        let bigEndian = Array(value.serialize())
        return Array((Array(repeating: 0, count: count - bigEndian.count) + bigEndian).reversed())
    }
}

/// A small seeded generator (SplitMix64): the random cases are the same on every run, so a failure
/// reproduces.
private struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64 = 0x5EED_CAFE_F00D_0255) { state = seed }

    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) } }
    mutating func element() -> FieldElement { FieldElement(reducingLittleEndian: bytes(32)) }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
