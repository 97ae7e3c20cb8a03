import DeviceIdentity

extension KeyedDecodingContainer {
    /// Decodes a fingerprint stored as 64 hex characters, or throws `DecodingError.dataCorrupted`.
    func decodeFingerprint(forKey key: Key) throws -> CertificateFingerprint {
        let text = try decode(String.self, forKey: key)
        guard let fingerprint = CertificateFingerprint(hex: text) else {
            throw DecodingError.dataCorruptedError(
                forKey: key,
                in: self,
                debugDescription: "fingerprint must be 64 hex characters (got \(text.count) characters)"
            )
        }
        return fingerprint
    }
}
