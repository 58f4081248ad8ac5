#if canImport(Glibc)
import Glibc
#endif
import BedrudProtocol
import BedrudRuntime
import Dispatch
import FoundationEssentials
import Synchronization

/// One resolved socket address (IPv4 or IPv6).
public struct SocketAddress: Sendable, CustomStringConvertible {
    public let family: Int32
    let storage: sockaddr_storage
    let length: socklen_t

    public var description: String {
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var s = storage
        let rc = withUnsafePointer(to: &s) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getnameinfo($0, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST)
            }
        }
        guard rc == 0 else { return "?" }
        return host.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}

/// Name resolution with a timeout. getaddrinfo(3) cannot be interrupted, so a slow
/// lookup runs on its own thread and is abandoned (its result discarded) at the deadline.
public enum Resolver {
    /// Resolves `host` for TCP on `port`. IP literals never touch DNS.
    /// - Throws: `NetworkError` `.nameResolutionFailed` or `.timedOut`.
    public static func resolve(host: String, port: UInt16, deadline: Deadline) throws -> [SocketAddress] {
        let endpoint = "\(host):\(port)"
        if let numeric = try? lookup(host: host, port: port, numericOnly: true), !numeric.isEmpty {
            return numeric
        }
        final class Box: @unchecked Sendable {
            // @unchecked: written once by the lookup thread before signalling `done`, read after waiting on it.
            var result: Result<[SocketAddress], NetworkError> = .failure(NetworkError(.nameResolutionFailed, endpoint: ""))
            let done = DispatchSemaphore(value: 0)
        }
        let box = Box()
        OSThread.start(name: "bedrud-resolve") {
            do {
                box.result = .success(try lookup(host: host, port: port, numericOnly: false))
            } catch let e as NetworkError {
                box.result = .failure(e)
            } catch {
                box.result = .failure(NetworkError(.nameResolutionFailed, endpoint: endpoint))
            }
            box.done.signal()
        }
        let ms = Int(deadline.remainingMilliseconds)
        if box.done.wait(timeout: .now() + .milliseconds(ms)) == .timedOut {
            throw NetworkError(.timedOut, endpoint: endpoint, detail: "name resolution")
        }
        return try box.result.get()
    }

    static func lookup(host: String, port: UInt16, numericOnly: Bool) throws -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV | (numericOnly ? AI_NUMERICHOST : AI_ADDRCONFIG)
        var res: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &res)
        guard rc == 0, let first = res else {
            let why = rc == 0 ? "no address" : String(cString: gai_strerror(rc))
            throw NetworkError(.nameResolutionFailed, endpoint: "\(host):\(port)", detail: why)
        }
        defer { freeaddrinfo(first) }
        var out: [SocketAddress] = []
        var p: UnsafeMutablePointer<addrinfo>? = first
        while let ai = p {
            if let sa = ai.pointee.ai_addr, ai.pointee.ai_addrlen <= socklen_t(MemoryLayout<sockaddr_storage>.size) {
                var storage = sockaddr_storage()
                withUnsafeMutableBytes(of: &storage) { dst in
                    dst.copyMemory(from: UnsafeRawBufferPointer(start: sa, count: Int(ai.pointee.ai_addrlen)))
                }
                out.append(SocketAddress(family: ai.pointee.ai_family, storage: storage, length: ai.pointee.ai_addrlen))
            }
            p = ai.pointee.ai_next
        }
        return out
    }
}
