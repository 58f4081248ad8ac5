/// A `multipart/form-data` body (RFC 7578), e.g. Bedrud's chat image upload.
public struct MultipartFormData: Sendable {
    public let boundary: String
    private var parts: [[UInt8]] = []

    public init(boundary: String = "bedrud-bot-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)) {
        self.boundary = boundary
    }

    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Adds a text field.
    public mutating func addField(name: String, value: String) {
        var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.quoted(name))\"\r\n\r\n"
        head += value
        head += "\r\n"
        parts.append(Array(head.utf8))
    }

    /// Adds a file field.
    public mutating func addFile(name: String, filename: String, contentType: String, data: [UInt8]) {
        let head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.quoted(name))\"; filename=\"\(Self.quoted(filename))\"\r\nContent-Type: \(contentType)\r\n\r\n"
        parts.append(Array(head.utf8) + data + Array("\r\n".utf8))
    }

    public var body: [UInt8] {
        var out: [UInt8] = []
        for p in parts { out += p }
        out += Array("--\(boundary)--\r\n".utf8)
        return out
    }

    static func quoted(_ s: String) -> String {
        s.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"").filter { $0 != "\r" && $0 != "\n" }
    }
}

extension String {
    func replacingAll(_ a: Character, with b: String) -> String {
        var out = ""
        for c in self { if c == a { out += b } else { out.append(c) } }
        return out
    }
}
