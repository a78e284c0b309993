// GET /docs: the Swagger UI over /openapi.json, as TEI serves it. The page and its assets
// are swagger-ui-dist's own files, compiled in (src/CMakeLists.txt); GET /docs redirects to
// /docs/ so that the page's relative links resolve under it.

#include <array>
#include <string_view>

#include "http/api_error.hpp"
#include "http/docs_route.hpp"

#ifdef WARDEN_SWAGGER_UI
namespace warden::embedded {
extern const std::string_view kSwaggerIndexHtml;
extern const std::string_view kSwaggerIndexCss;
extern const std::string_view kSwaggerUiCss;
extern const std::string_view kSwaggerUiBundleJs;
extern const std::string_view kSwaggerUiPresetJs;
extern const std::string_view kSwaggerInitializerJs;
}  // namespace warden::embedded
#endif

namespace warden::http {

namespace {

struct Asset {
  std::string_view file;  // "" is the page itself
  const std::string_view* text;
  std::string_view type;
};

#ifdef WARDEN_SWAGGER_UI
const std::array kAssets = {
    Asset{"", &embedded::kSwaggerIndexHtml, "text/html; charset=utf-8"},
    Asset{"index.css", &embedded::kSwaggerIndexCss, "text/css; charset=utf-8"},
    Asset{"swagger-ui.css", &embedded::kSwaggerUiCss, "text/css; charset=utf-8"},
    Asset{"swagger-ui-bundle.js", &embedded::kSwaggerUiBundleJs, "text/javascript; charset=utf-8"},
    Asset{"swagger-ui-standalone-preset.js", &embedded::kSwaggerUiPresetJs, "text/javascript; charset=utf-8"},
    Asset{"swagger-initializer.js", &embedded::kSwaggerInitializerJs, "text/javascript; charset=utf-8"},
};
#else
const std::array<Asset, 0> kAssets{};
#endif

}  // namespace

void docs(App& app, std::shared_ptr<Call> call, const std::string& file) {
  if (kAssets.empty()) {
    throw ApiError(404, "NotFound",
                   "this build has no Swagger UI: run scripts/fetch-swagger-ui, then build again "
                   "(the API's description is at /openapi.json)");
  }
  if (call->target == "/docs") {
    Response r;
    r.status = 308;
    r.content_type = "text/plain; charset=utf-8";
    r.headers.emplace_back("Location", "/docs/");
    return app.finish(*call, std::move(r));
  }
  for (const Asset& a : kAssets) {
    if (a.file != file) continue;
    Response r;
    r.body = std::string(*a.text);
    r.content_type = std::string(a.type);
    r.headers.emplace_back("Cache-Control", "public, max-age=3600");
    return app.finish(*call, std::move(r));
  }
  throw ApiError(404, "NotFound", "no such file under /docs/");
}

}  // namespace warden::http
