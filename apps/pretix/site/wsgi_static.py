"""pretix behind WhiteNoise: with debug off pretix leaves its static files to a web server, and the
app's own server is the only one here (the front proxies every path to it)."""

from pretix.settings import MEDIA_ROOT, STATIC_ROOT
from pretix.wsgi import application as pretix_application
from whitenoise import WhiteNoise

application = WhiteNoise(pretix_application, root=STATIC_ROOT, prefix="static/")
application.add_files(MEDIA_ROOT, prefix="media/")
