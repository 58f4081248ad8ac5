import COpenSSL
import CSRTP
import CNice
import CUsrsctp
func _probeRTC() -> [Any] { [shim_SSL_OP_NO_QUERY_MTU, srtp_init, nice_agent_new, usrsctp_init, shim_timeout_add, SSL_CTX_new] }
