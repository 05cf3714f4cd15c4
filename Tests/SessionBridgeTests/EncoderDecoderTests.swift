import Testing
@testable import SessionBridge
