<?xml version="1.0" encoding="UTF-8"?>
<!--
  sitemap_spider's stylesheet for people (SITEMAP_XSL=on). A browser that opens a sitemap of the
  set shows it through this file as a table; search engines read the XML and ignore it.
  XSLT 1.0, the version browsers implement; no script, no file besides this one.
-->
<xsl:stylesheet version="1.0"
    xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
    xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"
    xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
    xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"
    xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"
    xmlns:xhtml="http://www.w3.org/1999/xhtml"
    exclude-result-prefixes="sm image video news xhtml">
  <xsl:output method="html" encoding="UTF-8" indent="no" doctype-system="about:legacy-compat"/>

  <xsl:template match="/">
    <html lang="en">
      <head>
        <meta charset="utf-8"/>
        <meta name="viewport" content="width=device-width, initial-scale=1"/>
        <meta name="robots" content="noindex"/>
        <title>
          <xsl:choose>
            <xsl:when test="sm:sitemapindex">Sitemap index</xsl:when>
            <xsl:otherwise>Sitemap</xsl:otherwise>
          </xsl:choose>
        </title>
        <style>
          body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 72em; padding: 0 1em; color: #1d1d1f; }
          h1 { font-size: 1.4em; margin-bottom: .2em; }
          p.about { color: #555; margin-top: 0; }
          table { border-collapse: collapse; width: 100%; }
          th, td { text-align: left; padding: .35em .6em; border-bottom: 1px solid #e3e3e3; vertical-align: top; }
          th { background: #f4f4f6; position: sticky; top: 0; }
          td.loc { word-break: break-all; }
          td.lastmod, td.count { white-space: nowrap; }
          td.count { text-align: right; }
          ul.alternates { list-style: none; margin: 0; padding: 0; }
          a { color: #0b57d0; text-decoration: none; }
          a:hover { text-decoration: underline; }
        </style>
      </head>
      <body>
        <xsl:apply-templates select="sm:sitemapindex | sm:urlset"/>
      </body>
    </html>
  </xsl:template>

  <xsl:template match="sm:sitemapindex">
    <h1>Sitemap index</h1>
    <p class="about">
      <span class="total"><xsl:value-of select="count(sm:sitemap)"/></span> sitemap files.
      This page is for people; search engines read the XML behind it.
    </p>
    <table class="sitemaps">
      <thead><tr><th>Sitemap</th><th>Last modified</th></tr></thead>
      <tbody>
        <xsl:for-each select="sm:sitemap">
          <tr class="sitemap">
            <td class="loc"><a href="{sm:loc}"><xsl:value-of select="sm:loc"/></a></td>
            <td class="lastmod"><xsl:value-of select="sm:lastmod"/></td>
          </tr>
        </xsl:for-each>
      </tbody>
    </table>
  </xsl:template>

  <xsl:template match="sm:urlset">
    <h1>Sitemap</h1>
    <p class="about">
      <span class="total"><xsl:value-of select="count(sm:url)"/></span> URLs.
      This page is for people; search engines read the XML behind it.
    </p>
    <table class="urls">
      <thead>
        <tr><th>URL</th><th>Last modified</th><th>Images</th><th>Videos</th><th>Language versions</th></tr>
      </thead>
      <tbody>
        <xsl:for-each select="sm:url">
          <tr class="url">
            <td class="loc">
              <a href="{sm:loc}"><xsl:value-of select="sm:loc"/></a>
              <xsl:if test="news:news">
                <div class="news">News: <xsl:value-of select="news:news/news:title"/></div>
              </xsl:if>
            </td>
            <td class="lastmod"><xsl:value-of select="sm:lastmod"/></td>
            <td class="count images"><xsl:value-of select="count(image:image)"/></td>
            <td class="count videos"><xsl:value-of select="count(video:video)"/></td>
            <td class="alternates">
              <xsl:if test="xhtml:link[@rel='alternate']">
                <ul class="alternates">
                  <xsl:for-each select="xhtml:link[@rel='alternate']">
                    <li><a href="{@href}" hreflang="{@hreflang}"><xsl:value-of select="@hreflang"/></a></li>
                  </xsl:for-each>
                </ul>
              </xsl:if>
            </td>
          </tr>
        </xsl:for-each>
      </tbody>
    </table>
  </xsl:template>
</xsl:stylesheet>
