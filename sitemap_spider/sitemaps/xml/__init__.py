"""The bytes of sitemap documents: the only code that writes or reads <urlset>, <sitemapindex>,
<url> and the extension elements, and checks them against the XSDs."""
