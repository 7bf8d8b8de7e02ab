"""A stand-in push endpoint for the walk-through: prints each push, keeps the
last one in last-push.json / last-push.auth, and answers 200."""
import http.server, sys

class Echo(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open("last-push.json", "wb") as f:
            f.write(body)
        with open("last-push.auth", "w") as f:
            f.write(self.headers.get("Authorization", ""))
        print(f"push to {self.path}  Authorization: {self.headers.get('Authorization')}\n{body.decode()}\n", flush=True)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass

http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Echo).serve_forever()
