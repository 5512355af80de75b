import Foundation
import HealthModel
import HealthStore
import Hummingbird
import Sysexits

/// A failed request: a status and one sentence (what, why, what to do), answered as
/// `{"error": "…"}` (docs/http-api.md, "Errors").
package struct APIError: Error, Sendable, HTTPResponseError {
    package let status: HTTPResponse.Status
    package let message: String

    package init(_ status: HTTPResponse.Status, _ message: String) {
        self.status = status
        self.message = message
    }

    /// 400 naming the query parameter.
    static func parameter(_ name: String, _ why: String) -> APIError { APIError(.badRequest, "query parameter '\(name)' \(why)") }

    package func response(from request: Request, context: some RequestContext) throws -> Response {
        var r = try JSONResponse.make(["error": message], status: status)
        if status == .unauthorized { r.headers[.wwwAuthenticate] = "Bearer realm=\"healthgate\"" }
        return r
    }

    /// The answer for any error a route or the store threw.
    static func from(_ error: any Error) -> APIError {
        switch error {
        case let e as APIError: return e
        case let e as ChangeFeedError:
            // An anchor that cannot be answered without a gap is a conflict with the store's
            // history (the CLI's exit 65); a malformed anchor or limit is a bad parameter.
            return e.requiresResync ? APIError(.conflict, "\(e)") : APIError(.badRequest, "query parameter 'anchor' or 'limit': \(e)")
        case let e as StoreError:
            switch e.kind {
            case .busy: return APIError(.serviceUnavailable, "the health store is locked by another writer: retry in a moment.")
            case .io, .permission, .noInput, .config:
                return APIError(.serviceUnavailable, "the health store is unavailable (\(e)); the server's log has details, retry once it is fixed.")
            case .usage, .data: return APIError(.badRequest, "\(e)")
            case .corrupt, .internal: return APIError(.internalServerError, "the health store failed: \(e)")
            }
        case let e as HealthModelError: return APIError(.badRequest, "\(e)")
        case let e as SampleJSON.DecodeError: return APIError(.badRequest, "\(e)")
        case let e as HTTPError:
            switch e.status {
            case .notFound: return APIError(.notFound, "no such endpoint: see /v1/openapi.json for the API's paths.")
            case .methodNotAllowed: return APIError(.methodNotAllowed, "this method is not allowed on this path: see /v1/openapi.json.")
            case .contentTooLarge: return APIError(.contentTooLarge, "the request body is too large: send at most \(APIServer.maxBodyBytes) bytes, splitting big imports into several requests.")
            default: return APIError(e.status, e.body ?? "the request failed (\(e.status.code)).")
            }
        default: return APIError(.internalServerError, "internal error (\(type(of: error))): please report it.")
        }
    }
}

/// JSON responses in the CLI's `--json` text (`JSONOutput.textOptions`: sorted keys, unescaped
/// slashes, one line). `EndpointTests.sameAsCLI` compares the two texts byte for byte.
enum JSONResponse {
    /// - Throws: a 500 when the value holds something JSON cannot (NaN, an infinity), never a `null`.
    static func make(_ value: Any, status: HTTPResponse.Status = .ok) throws -> Response {
        text(try string(value) + "\n", status: status, contentType: "application/json")
    }

    static func string(_ value: Any) throws -> String {
        do {
            return try JSONOutput.string(value)
        } catch {
            throw APIError(.internalServerError, "the answer holds a value JSON cannot represent (NaN or an infinity): this is a bug, please report it with the request.")
        }
    }

    static func text(_ body: String, status: HTTPResponse.Status = .ok, contentType: String) -> Response {
        Response(status: status, headers: [.contentType: contentType, .cacheControl: "no-store"],
                 body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
}
