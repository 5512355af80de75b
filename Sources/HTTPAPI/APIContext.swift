import AccessTokens
import Hummingbird
import NIOCore

/// Each request's context: Hummingbird's core storage, the client's address (for the
/// failed-authentication brake) and, once authenticated, the token.
package struct APIContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The client's IP address as text ("127.0.0.1", "::1"); "unknown" when the socket has none.
    package let clientAddress: String
    /// The token of this request, set by ``BearerAuthenticator``.
    package var token: AccessTokenInfo?

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        clientAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
        token = nil
    }

    /// The authenticated token's scopes; routes behind the authenticator always have one.
    var scopes: TokenScopes { token?.scopes ?? TokenScopes(read: [], write: []) }
}
