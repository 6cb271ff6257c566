from django.apps import apps
from django.conf import settings
from django.urls import include, path, re_path
from django.views.static import serve

urlpatterns = [
    path("i18n/", include("django.conf.urls.i18n")),
    # DEBUG is off, so Django serves the uploaded product pictures only through this view.
    re_path(r"^media/(?P<path>.*)$", serve, {"document_root": settings.MEDIA_ROOT}),
    path("", include(apps.get_app_config("oscar").urls[0])),
]
